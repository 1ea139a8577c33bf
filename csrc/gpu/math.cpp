// GPU-stream extra elementwise math (MLX); formulas: docs/numerics.md,
// "Extra elementwise math".
#include "gpu/math.h"

#include <cmath>
#include <limits>

#include "gpu/array.h"

namespace lucid::gpu {

namespace {

constexpr float kPi = 3.14159265358979323846f;
constexpr float kLn2 = 0.69314718055994530942f;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

mx::array f(float v) { return mx::array(v, mx::float32); }

// Sign bit of a floating array: its bits viewed as the signed integer of the
// same width are negative exactly when the sign bit is set (also -0, -NaN).
mx::array sign_bit(const mx::array& a, mx::StreamOrDevice s) {
  mx::Dtype it = a.dtype().size() == 2 ? mx::int16 : a.dtype().size() == 4 ? mx::int32 : mx::int64;
  return mx::less(mx::view(a, it, s), mx::array(0, it), s);
}

// erfc by the Chebyshev-fitted form t * exp(-z^2 + P(t)), t = 1 / (1 + z/2),
// z = |x| (relative error < 1.2e-7 for every x); erfc(-z) = 2 - erfc(z).
// z^2 is split as zh^2 + (z - zh)(z + zh) with zh = z to 1/16: zh^2 is exact
// in float32, so the rounding of z^2 (up to 5e-6 at z = 9) does not reach
// the exponent.
mx::array erfc_f32(const mx::array& x, mx::StreamOrDevice s) {
  static const float c[10] = {-1.26551223f, 1.00002368f, 0.37409196f, 0.09678418f, -0.18628806f,
                              0.27886807f,  -1.13520398f, 1.48851587f, -0.82215223f, 0.17087277f};
  mx::array z = mx::abs(x, s);
  mx::array t = mx::divide(f(1.0f), mx::add(f(1.0f), mx::multiply(f(0.5f), z, s), s), s);
  mx::array p = f(c[9]);
  for (int i = 8; i >= 0; --i) p = mx::add(f(c[i]), mx::multiply(t, p, s), s);
  mx::array zh = mx::divide(mx::floor(mx::multiply(z, f(16.0f), s), s), f(16.0f), s);
  mx::array rest = mx::multiply(mx::subtract(z, zh, s), mx::add(z, zh, s), s);
  mx::array e = mx::multiply(mx::exp(mx::negative(mx::multiply(zh, zh, s), s), s),
                             mx::exp(mx::subtract(p, rest, s), s), s);
  mx::array r = mx::where(mx::isinf(z, s), f(0.0f), mx::multiply(t, e, s), s);
  return mx::where(mx::less(x, f(0.0f), s), mx::subtract(f(2.0f), r, s), r, s);
}

// sin(pi x) and tan(pi x) through the exact x - round(x) (the same up to sign /
// exactly, by periodicity): pi * x itself would round by up to |x| * 2^-24 * pi.
mx::array reduced(const mx::array& x, mx::StreamOrDevice s) {
  return mx::multiply(f(kPi), mx::subtract(x, mx::round(x, 0, s), s), s);
}

// ln Gamma(z) for z >= 0.5 by Lanczos' series (g = 7, nine terms).
mx::array lanczos_lgamma(const mx::array& z, mx::StreamOrDevice s) {
  static const double c[9] = {0.99999999999980993, 676.5203681218851, -1259.1392167224028,
                              771.32342877765313, -176.61502916214059, 12.507343278686905,
                              -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  mx::array zm1 = mx::subtract(z, f(1.0f), s);
  mx::array sum = f(static_cast<float>(c[0]));
  for (int i = 1; i < 9; ++i)
    sum = mx::add(sum, mx::divide(f(static_cast<float>(c[i])), mx::add(zm1, f(static_cast<float>(i)), s), s), s);
  mx::array t = mx::add(zm1, f(7.5f), s);
  mx::array r = mx::subtract(mx::multiply(mx::add(zm1, f(0.5f), s), mx::log(t, s), s), t, s);
  return mx::add(mx::add(r, f(0.91893853320467274f), s), mx::log(sum, s), s);  // + ln sqrt(2 pi)
}

mx::array is_nonpositive_integer(const mx::array& x, mx::StreamOrDevice s) {
  return mx::logical_and(mx::less_equal(x, f(0.0f), s), mx::equal(x, mx::floor(x, s), s), s);
}

// ln|Gamma(x)|: reflection ln(pi / |sin(pi x)|) - lnGamma(1 - x) below 0.5;
// +inf at 0, the negative integers and +-inf.
mx::array lgamma_f32(const mx::array& x, mx::StreamOrDevice s) {
  mx::array small = mx::less(x, f(0.5f), s);
  mx::array z = mx::where(small, mx::subtract(f(1.0f), x, s), x, s);
  mx::array l = lanczos_lgamma(z, s);
  mx::array refl = mx::subtract(
      mx::log(mx::divide(f(kPi), mx::abs(mx::sin(reduced(x, s), s), s), s), s), l, s);
  mx::array r = mx::where(small, refl, l, s);
  mx::array pole = mx::logical_or(is_nonpositive_integer(x, s), mx::isinf(x, s), s);
  return mx::where(pole, f(kInf), r, s);
}

// psi(x): reflection psi(1 - x) - pi / tan(pi x) below 0.5, six recurrence
// steps psi(y) = psi(y + 6) - sum 1/(y + k), then the asymptotic series at
// y + 6 through (y + 6)^-8. psi(+-0) = -+inf, NaN at negative integers.
mx::array digamma_f32(const mx::array& x, mx::StreamOrDevice s) {
  mx::array small = mx::less(x, f(0.5f), s);
  mx::array y = mx::where(small, mx::subtract(f(1.0f), x, s), x, s);
  mx::array acc = mx::where(small, mx::negative(mx::divide(f(kPi), mx::tan(reduced(x, s), s), s), s),
                            f(0.0f), s);
  for (int k = 0; k < 6; ++k) acc = mx::subtract(acc, mx::divide(f(1.0f), mx::add(y, f(float(k)), s), s), s);
  mx::array w = mx::add(y, f(6.0f), s);
  mx::array z = mx::divide(f(1.0f), mx::multiply(w, w, s), s);
  mx::array series = f(1.0f / 240);
  series = mx::subtract(f(1.0f / 252), mx::multiply(z, series, s), s);
  series = mx::subtract(f(1.0f / 120), mx::multiply(z, series, s), s);
  series = mx::subtract(f(1.0f / 12), mx::multiply(z, series, s), s);
  series = mx::multiply(z, series, s);
  mx::array r = mx::subtract(mx::subtract(mx::add(acc, mx::log(w, s), s), mx::divide(f(0.5f), w, s), s), series, s);
  r = mx::where(mx::equal(x, f(kInf), s), f(kInf), r, s);
  mx::array zero_val = mx::where(sign_bit(x, s), f(kInf), f(-kInf), s);
  r = mx::where(mx::equal(x, f(0.0f), s), zero_val, r, s);
  mx::array bad = mx::logical_and(is_nonpositive_integer(x, s), mx::not_equal(x, f(0.0f), s), s);
  return mx::where(mx::logical_or(bad, mx::equal(x, f(-kInf), s), s), f(kNaN), r, s);
}

mx::array sinc_f32(const mx::array& x, mx::StreamOrDevice s) {
  mx::array px = mx::multiply(f(kPi), x, s);
  return mx::where(mx::equal(x, f(0.0f), s), f(1.0f), mx::divide(mx::sin(px, s), px, s), s);
}

// max(|a|,|b|) * sqrt(1 + (min/max)^2): no overflow of a^2 + b^2; +inf if either is infinite.
mx::array hypot_f32(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  mx::array aa = mx::abs(a, s), ab = mx::abs(b, s);
  mx::array hi = mx::maximum(aa, ab, s), lo = mx::minimum(aa, ab, s);
  mx::array safe = mx::where(mx::equal(hi, f(0.0f), s), f(1.0f), hi, s);
  mx::array q = mx::divide(lo, safe, s);
  mx::array r = mx::multiply(hi, mx::sqrt(mx::add(f(1.0f), mx::multiply(q, q, s), s), s), s);
  r = mx::where(mx::equal(hi, f(0.0f), s), f(0.0f), r, s);
  return mx::where(mx::logical_or(mx::isinf(a, s), mx::isinf(b, s), s), f(kInf), r, s);
}

// log2(2^a + 2^b) = max + log1p(2^-|a - b|) / ln 2; a == b (infinities too) gives a + 1.
mx::array logaddexp2_f32(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  mx::array m = mx::maximum(a, b, s);
  mx::array d = mx::negative(mx::abs(mx::subtract(a, b, s), s), s);
  mx::array r = mx::add(m, mx::divide(mx::log1p(mx::power(f(2.0f), d, s), s), f(kLn2), s), s);
  return mx::where(mx::equal(a, b, s), mx::add(a, f(1.0f), s), r, s);
}

mx::array logaddexp_f32(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  mx::array m = mx::maximum(a, b, s);
  mx::array d = mx::negative(mx::abs(mx::subtract(a, b, s), s), s);
  mx::array r = mx::add(m, mx::log1p(mx::exp(d, s), s), s);
  return mx::where(mx::equal(a, b, s), mx::add(a, f(kLn2), s), r, s);
}

// The default quiet NaN of a float dtype, by its bits (0x7e00, 0x7fc0, 0x7fc00000,
// 0x7ff8...): what the CPU stream's conversions give; MLX's own float16 NaN differs.
mx::array default_nan(mx::Dtype dt, mx::StreamOrDevice s) {
  if (dt == mx::float16) return mx::view(mx::array(int16_t(0x7e00), mx::int16), dt, s);
  if (dt == mx::bfloat16) return mx::view(mx::array(int16_t(0x7fc0), mx::int16), dt, s);
  if (dt == mx::float64) return mx::view(mx::array(int64_t(0x7ff8000000000000LL), mx::int64), dt, s);
  return mx::view(mx::array(int32_t(0x7fc00000), mx::int32), dt, s);
}

mx::array nextafter_bits(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  mx::Dtype dt = a.dtype();
  mx::Dtype it = dt.size() == 2 ? mx::int16 : dt.size() == 4 ? mx::int32 : mx::int64;
  mx::array zero = mx::array(0, dt);
  mx::array bits = mx::view(a, it, s);
  mx::array away = mx::equal(mx::greater(b, a, s), mx::greater(a, zero, s), s);
  mx::array moved = mx::add(bits, mx::where(away, mx::array(1, it), mx::array(-1, it), s), s);
  mx::array tiny = mx::view(mx::array(1, it), dt, s);
  mx::array r = mx::where(mx::equal(a, zero, s), mx::where(mx::greater(b, zero, s), tiny, mx::negative(tiny, s), s),
                          mx::view(moved, dt, s), s);
  r = mx::where(mx::equal(a, b, s), b, r, s);
  // NaN in: the default quiet NaN (payloads of NaN arithmetic differ between the streams)
  return mx::where(mx::logical_or(mx::isnan(a, s), mx::isnan(b, s), s), default_nan(dt, s), r, s);
}

}  // namespace

Tensor math_unary(MathUnaryOp op, const Tensor& x) {
  auto s = stream();
  const mx::array& a = array_of(x);
  mx::Dtype dt = a.dtype();
  mx::array w = mx::astype(a, mx::float32, s);
  mx::array r = w;
  switch (op) {
    case MathUnaryOp::Tan: r = mx::tan(w, s); break;
    case MathUnaryOp::Sinh: r = mx::sinh(w, s); break;
    case MathUnaryOp::Cosh: r = mx::cosh(w, s); break;
    case MathUnaryOp::Asin: r = mx::arcsin(w, s); break;
    case MathUnaryOp::Acos: r = mx::arccos(w, s); break;
    case MathUnaryOp::Atan: r = mx::arctan(w, s); break;
    case MathUnaryOp::Asinh: r = mx::arcsinh(w, s); break;
    case MathUnaryOp::Acosh: r = mx::arccosh(w, s); break;
    case MathUnaryOp::Atanh: r = mx::arctanh(w, s); break;
    case MathUnaryOp::Trunc: r = mx::trunc(w, s); break;
    case MathUnaryOp::Frac: r = mx::subtract(w, mx::trunc(w, s), s); break;
    case MathUnaryOp::Log10: r = mx::log10(w, s); break;
    case MathUnaryOp::Exp2: r = mx::power(f(2.0f), w, s); break;
    case MathUnaryOp::Erfc: r = erfc_f32(w, s); break;
    case MathUnaryOp::Erfinv: r = mx::erfinv(w, s); break;
    case MathUnaryOp::Lgamma: r = lgamma_f32(w, s); break;
    case MathUnaryOp::Digamma: r = digamma_f32(w, s); break;
    case MathUnaryOp::Sinc: r = sinc_f32(w, s); break;
  }
  return wrap(mx::astype(r, dt, s));
}

Tensor math_predicate(MathPredicate op, const Tensor& x) {
  auto s = stream();
  const mx::array& a = array_of(x);
  if (!mx::issubdtype(a.dtype(), mx::floating)) {
    if (op == MathPredicate::Signbit && mx::issubdtype(a.dtype(), mx::signedinteger))
      return wrap(mx::less(a, mx::array(0, a.dtype()), s));
    return wrap(mx::zeros(a.shape(), mx::bool_, s));
  }
  switch (op) {
    case MathPredicate::Signbit: return wrap(sign_bit(a, s));
    case MathPredicate::IsPosInf: return wrap(mx::isposinf(a, s));
    case MathPredicate::IsNegInf: return wrap(mx::isneginf(a, s));
  }
  return wrap(sign_bit(a, s));
}

Tensor math_binary(MathBinaryOp op, const Tensor& a, const Tensor& b) {
  auto s = stream();
  mx::array x = array_of(a);
  mx::array y = array_of(b);
  mx::Dtype dt = x.dtype();
  switch (op) {  // exact ones: in the tensor's own dtype
    case MathBinaryOp::Copysign: {
      mx::array m = mx::abs(x, s);
      return wrap(mx::where(sign_bit(y, s), mx::negative(m, s), m, s));
    }
    case MathBinaryOp::Fmax:
    case MathBinaryOp::Fmin: {
      mx::array r = op == MathBinaryOp::Fmax ? mx::maximum(x, y, s) : mx::minimum(x, y, s);
      return wrap(mx::where(mx::isnan(x, s), y, mx::where(mx::isnan(y, s), x, r, s), s));
    }
    case MathBinaryOp::Nextafter: return wrap(nextafter_bits(x, y, s));
    default: break;
  }
  mx::array u = mx::astype(x, mx::float32, s), v = mx::astype(y, mx::float32, s);
  mx::array r = u;
  switch (op) {
    case MathBinaryOp::Hypot: r = hypot_f32(u, v, s); break;
    case MathBinaryOp::LogAddExp: r = logaddexp_f32(u, v, s); break;
    case MathBinaryOp::LogAddExp2: r = logaddexp2_f32(u, v, s); break;
    case MathBinaryOp::Xlogy:
      r = mx::where(mx::isnan(v, s), v,
                    mx::where(mx::equal(u, f(0.0f), s), f(0.0f), mx::multiply(u, mx::log(v, s), s), s), s);
      break;
    default: break;
  }
  return wrap(mx::astype(r, dt, s));
}

}  // namespace lucid::gpu
