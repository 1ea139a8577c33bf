#include "gpu/elementwise.h"

#include "core/errors.h"
#include "gpu/array.h"

namespace lucid::gpu {

namespace {

bool is_half(mx::Dtype t) { return t == mx::float16 || t == mx::bfloat16; }

// The op in MLX on an array already in its compute dtype.
mx::array unary_mx(UnaryOp op, const mx::array& x, mx::StreamOrDevice s) {
  auto scalar = [&](double v) { return mx::array(static_cast<float>(v), x.dtype()); };
  switch (op) {
    case UnaryOp::Neg: return mx::negative(x, s);
    case UnaryOp::Abs: return mx::abs(x, s);
    case UnaryOp::Sign:  // MLX gives sign(NaN) = 0; lucid keeps NaN (numpy), as the CPU stream does
      if (mx::issubdtype(x.dtype(), mx::floating)) return mx::where(mx::isnan(x, s), x, mx::sign(x, s), s);
      return mx::sign(x, s);
    case UnaryOp::Relu: {  // relu(NaN) = NaN, relu(-0) = +0, like the CPU stream
      mx::array zero = mx::zeros({}, x.dtype(), s);
      return mx::where(mx::logical_not(mx::less_equal(x, zero, s), s), x, zero, s);
    }
    case UnaryOp::Exp: return mx::exp(x, s);
    case UnaryOp::Log: return mx::log(x, s);
    case UnaryOp::Sqrt: return mx::sqrt(x, s);
    case UnaryOp::Rsqrt: return mx::rsqrt(x, s);
    case UnaryOp::Sin: return mx::sin(x, s);
    case UnaryOp::Cos: return mx::cos(x, s);
    case UnaryOp::Tanh: return mx::tanh(x, s);
    case UnaryOp::Sigmoid: return mx::sigmoid(x, s);
    case UnaryOp::Erf: return mx::erf(x, s);
    case UnaryOp::Gelu: {  // 0.5 x (1 + erf(x / sqrt 2))
      mx::array e = mx::erf(mx::multiply(x, scalar(0.70710678118654752440), s), s);
      return mx::multiply(mx::multiply(scalar(0.5), x, s), mx::add(scalar(1.0), e, s), s);
    }
    case UnaryOp::GeluTanh: {  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      mx::array x3 = mx::multiply(mx::multiply(x, x, s), x, s);
      mx::array inner = mx::multiply(scalar(0.79788456080286535588),
                                     mx::add(x, mx::multiply(scalar(0.044715), x3, s), s), s);
      return mx::multiply(mx::multiply(scalar(0.5), x, s), mx::add(scalar(1.0), mx::tanh(inner, s), s), s);
    }
    case UnaryOp::Floor: return mx::floor(x, s);
    case UnaryOp::Ceil: return mx::ceil(x, s);
    case UnaryOp::Round: return mx::round(x, 0, s);  // half to even
  }
  throw RuntimeError("internal: unknown unary op");
}

bool computes_in_float(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: case UnaryOp::Abs: case UnaryOp::Sign: case UnaryOp::Relu:
    case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Round:
      return false;  // exact in any dtype
    default:
      return true;
  }
}

// Integer a ** b with b < 0 gives the truncated 1 / a^|b| (see
// cpu/elementwise_functors.h); MLX's integer power needs b >= 0.
mx::array integer_pow(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  mx::array zero = mx::zeros({}, a.dtype(), s);
  mx::array one = mx::ones({}, a.dtype(), s);
  if (!mx::issubdtype(a.dtype(), mx::signedinteger)) return mx::power(a, b, s);
  mx::array minus_one = mx::negative(one, s);
  mx::array positive = mx::power(a, mx::maximum(b, zero, s), s);
  mx::array odd = mx::not_equal(mx::bitwise_and(b, one, s), zero, s);
  mx::array negative = mx::where(mx::equal(a, one, s), one,
                                 mx::where(mx::equal(a, minus_one, s), mx::where(odd, minus_one, one, s), zero, s), s);
  return mx::where(mx::less(b, zero, s), negative, positive, s);
}

// Floating a ** b with the CPU stream's exact small exponents (see
// cpu/elementwise_functors.h): b == 2 is the correctly rounded a * a, b == 1 is
// a, b == 0 is 1, so x ** 2 is bit-identical on both streams; MLX's power is
// within an ulp of those but not equal to them.
mx::array float_pow(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  const mx::Dtype t = a.dtype();
  mx::array p = mx::power(a, b, s);
  p = mx::where(mx::equal(b, mx::array(2.0f, t), s), mx::multiply(a, a, s), p, s);
  p = mx::where(mx::equal(b, mx::array(1.0f, t), s), a, p, s);
  return mx::where(mx::equal(b, mx::array(0.0f, t), s), mx::array(1.0f, t), p, s);
}

// fmod / remainder / floor division (docs/numerics.md "Floor division and
// remainder"). MLX's remainder is Python's (the divisor's sign); fmod is built
// from it on magnitudes, where the two agree exactly, then given a's sign
// (a * 0 carries a's sign onto a zero result). Integers: ops/ has already
// rejected a zero divisor.
mx::array fmod_mx(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  mx::array zero = mx::zeros({}, a.dtype(), s);
  if (mx::issubdtype(a.dtype(), mx::integer)) {
    if (!mx::issubdtype(a.dtype(), mx::signedinteger)) return mx::remainder(a, b, s);
    mx::array r = mx::remainder(a, b, s);  // 0 for b == -1, also at the minimum
    mx::array fix = mx::logical_and(mx::not_equal(r, zero, s),
                                    mx::not_equal(mx::less(r, zero, s), mx::less(a, zero, s), s), s);
    return mx::where(fix, mx::subtract(r, b, s), r, s);
  }
  mx::array r = mx::remainder(mx::abs(a, s), mx::abs(b, s), s);
  return mx::where(mx::equal(r, zero, s), mx::multiply(a, zero, s),
                   mx::where(mx::less(a, zero, s), mx::negative(r, s), r, s), s);
}

mx::array remainder_mx(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  if (mx::issubdtype(a.dtype(), mx::integer)) return mx::remainder(a, b, s);
  mx::array zero = mx::zeros({}, a.dtype(), s);
  mx::array mod = fmod_mx(a, b, s);
  mx::array fix = mx::logical_and(mx::not_equal(mod, zero, s),
                                  mx::not_equal(mx::less(mod, zero, s), mx::less(b, zero, s), s), s);
  return mx::where(fix, mx::add(mod, b, s), mod, s);
}

mx::array floor_divide_mx(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  if (mx::issubdtype(a.dtype(), mx::integer)) {
    if (!mx::issubdtype(a.dtype(), mx::signedinteger)) return mx::floor_divide(a, b, s);
    // b == -1 wraps (0 - a), like the CPU stream, whatever MLX does at the minimum.
    mx::array minus_one = mx::negative(mx::ones({}, a.dtype(), s), s);
    return mx::where(mx::equal(b, minus_one, s), mx::negative(a, s), mx::floor_divide(a, b, s), s);
  }
  mx::array zero = mx::zeros({}, a.dtype(), s);
  mx::array one = mx::ones({}, a.dtype(), s);
  mx::array mod = fmod_mx(a, b, s);
  mx::array div = mx::divide(mx::subtract(a, mod, s), b, s);
  mx::array fix = mx::logical_and(mx::not_equal(mod, zero, s),
                                  mx::not_equal(mx::less(b, zero, s), mx::less(mod, zero, s), s), s);
  div = mx::where(fix, mx::subtract(div, one, s), div, s);
  mx::array fl = mx::floor(div, s);
  fl = mx::where(mx::greater(mx::subtract(div, fl, s), mx::array(0.5f, a.dtype()), s), mx::add(fl, one, s), fl, s);
  mx::array quotient = mx::divide(a, b, s);
  fl = mx::where(mx::equal(div, zero, s), mx::multiply(quotient, zero, s), fl, s);  // copysign(0, a / b)
  return mx::where(mx::equal(b, zero, s), quotient, fl, s);
}

mx::array rounding_division(BinaryOp op, const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  switch (op) {
    case BinaryOp::FloorDivide: return floor_divide_mx(a, b, s);
    case BinaryOp::Remainder: return remainder_mx(a, b, s);
    default: return fmod_mx(a, b, s);
  }
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x) {
  const mx::array& a = array_of(x);
  auto s = stream();
  if (is_half(a.dtype()) && computes_in_float(op))
    return wrap(mx::astype(unary_mx(op, mx::astype(a, mx::float32, s), s), a.dtype(), s));
  return wrap(unary_mx(op, a, s));
}

Tensor predicate(PredicateOp op, const Tensor& x) {
  const mx::array& a = array_of(x);
  auto s = stream();
  switch (op) {
    case PredicateOp::IsNan: return wrap(mx::isnan(a, s));
    case PredicateOp::IsInf: return wrap(mx::isinf(a, s));
    case PredicateOp::IsFinite: return wrap(mx::isfinite(a, s));
  }
  throw RuntimeError("internal: unknown predicate");
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, DType out_dtype) {
  auto s = stream();
  mx::Dtype dt = to_mx(out_dtype);
  mx::array x = mx::astype(array_of(a), dt, s);
  mx::array y = mx::astype(array_of(b), dt, s);
  switch (op) {
    case BinaryOp::Add: return wrap(mx::add(x, y, s));
    case BinaryOp::Sub: return wrap(mx::subtract(x, y, s));
    case BinaryOp::Mul: return wrap(mx::multiply(x, y, s));
    case BinaryOp::Div: return wrap(mx::divide(x, y, s));
    case BinaryOp::Pow:
      if (mx::issubdtype(dt, mx::integer)) return wrap(integer_pow(x, y, s));
      if (is_half(dt))  // like the CPU stream: pow in float32, one rounding
        return wrap(mx::astype(float_pow(mx::astype(x, mx::float32, s), mx::astype(y, mx::float32, s), s), dt, s));
      return wrap(float_pow(x, y, s));
    case BinaryOp::Maximum: return wrap(mx::maximum(x, y, s));  // propagates NaN
    case BinaryOp::Minimum: return wrap(mx::minimum(x, y, s));
    case BinaryOp::FloorDivide: case BinaryOp::Remainder: case BinaryOp::Fmod:
      if (is_half(dt))  // like the CPU stream: computed in float32, rounded once
        return wrap(mx::astype(rounding_division(op, mx::astype(x, mx::float32, s), mx::astype(y, mx::float32, s), s),
                               dt, s));
      return wrap(rounding_division(op, x, y, s));
  }
  throw RuntimeError("internal: unknown binary op");
}

Tensor compare(CompareOp op, const Tensor& a, const Tensor& b, DType compute_dtype) {
  auto s = stream();
  mx::Dtype dt = to_mx(compute_dtype);
  mx::array x = mx::astype(array_of(a), dt, s);
  mx::array y = mx::astype(array_of(b), dt, s);
  auto truth = [&](const mx::array& v) { return mx::astype(v, mx::bool_, s); };  // v != 0
  switch (op) {
    case CompareOp::Eq: return wrap(mx::equal(x, y, s));
    case CompareOp::Ne: return wrap(mx::not_equal(x, y, s));
    case CompareOp::Lt: return wrap(mx::less(x, y, s));
    case CompareOp::Le: return wrap(mx::less_equal(x, y, s));
    case CompareOp::Gt: return wrap(mx::greater(x, y, s));
    case CompareOp::Ge: return wrap(mx::greater_equal(x, y, s));
    case CompareOp::LogicalAnd: return wrap(mx::logical_and(truth(x), truth(y), s));
    case CompareOp::LogicalOr: return wrap(mx::logical_or(truth(x), truth(y), s));
    case CompareOp::LogicalXor: return wrap(mx::not_equal(truth(x), truth(y), s));
  }
  throw RuntimeError("internal: unknown comparison");
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, DType out_dtype) {
  auto s = stream();
  mx::Dtype dt = to_mx(out_dtype);
  return wrap(mx::where(mx::astype(array_of(cond), mx::bool_, s), mx::astype(array_of(a), dt, s),
                        mx::astype(array_of(b), dt, s), s));
}

}  // namespace lucid::gpu
