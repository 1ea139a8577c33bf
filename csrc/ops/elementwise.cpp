#include "ops/elementwise.h"

#include "core/elementwise_kind.h"
#include "core/errors.h"
#include "cpu/elementwise.h"
#include "gpu/elementwise.h"
#include "ops/copy.h"
#include "ops/reduction.h"

namespace lucid::ops {

namespace {

Tensor cast_if_needed(const Tensor& x, DType dtype) { return x.dtype() == dtype ? x : astype(x, dtype); }

// Transcendental ops compute in float: integer and bool inputs promote to float32.
Tensor unary_float(UnaryOp op, const char* fn, const Tensor& x) {
  common_device(fn, {&x});
  DType dt = is_floating(x.dtype()) ? x.dtype() : DType::Float32;
  if (x.device() == Device::GPU) return gpu::unary(op, cast_if_needed(x, dt));
  Tensor xc = contiguous(cast_if_needed(x, dt));
  Tensor out = Tensor::empty_cpu(x.shape(), dt);
  cpu::unary(op, xc, out);
  return out;
}

void reject_bool(const char* fn, const Tensor& x, const char* argument = "input") {
  if (x.dtype() == DType::Bool)  // message built only on failure: neg / abs / relu run this per call
    throw TypeError(std::string(fn) + "(): argument '" + argument + "' must be a numeric tensor, got bool");
}

Tensor unary_numeric(UnaryOp op, const char* fn, const Tensor& x) {
  common_device(fn, {&x});
  reject_bool(fn, x);
  if (x.device() == Device::GPU) return gpu::unary(op, x);
  Tensor xc = contiguous(x);
  Tensor out = Tensor::empty_cpu(x.shape(), x.dtype());
  cpu::unary(op, xc, out);
  return out;
}

Tensor rounding(UnaryOp op, const char* fn, const Tensor& x) {
  common_device(fn, {&x});
  reject_bool(fn, x);
  if (!is_floating(x.dtype())) return clone(x);  // integers are already whole
  return unary_float(op, fn, x);
}

Tensor predicate(PredicateOp op, const char* fn, const Tensor& x, bool integer_answer) {
  common_device(fn, {&x});
  if (!is_floating(x.dtype())) return full(x.shape(), integer_answer ? 1.0 : 0.0, DType::Bool, x.device());
  if (x.device() == Device::GPU) return gpu::predicate(op, x);
  Tensor xc = contiguous(x);
  Tensor out = Tensor::empty_cpu(x.shape(), DType::Bool);
  cpu::predicate(op, xc, out);
  return out;
}

Tensor compare_op(CompareOp op, const char* fn, const Tensor& a, const Tensor& b) {
  common_device(fn, {&a, &b});
  Shape shape = broadcast_shapes(a.shape(), b.shape(), fn);
  DType dt = promote_types(a.dtype(), b.dtype());
  if (a.device() == Device::GPU) return gpu::compare(op, a, b, dt);
  Tensor out = Tensor::empty_cpu(shape, DType::Bool);
  cpu::compare(op, cast_if_needed(a, dt), cast_if_needed(b, dt), out);
  return out;
}

// Integer division by zero has no value (C++ leaves it undefined, MLX returns
// garbage): both streams check the divisor first and raise the same error.
// This reads `b` back on the GPU stream, one synchronisation per call. An
// empty result divides nothing, so it raises nothing.
void reject_integer_zero(const char* fn, const Tensor& b, DType dt, const Shape& out_shape) {
  if (is_floating(dt) || b.numel() == 0 || numel(out_shape) == 0) return;
  Tensor has_zero = any(compare_op(CompareOp::Eq, fn, b, full({}, 0.0, b.dtype(), b.device())), std::nullopt, false);
  Tensor host = to_device(has_zero, Device::CPU);
  check<ValueError>(!host.data<bool>()[0], std::string(fn) + "(): integer division by zero: argument 'other' "
                                               "holds a zero");
}

Tensor binary_arith(BinaryOp op, const char* fn, const Tensor& a, const Tensor& b) {
  common_device(fn, {&a, &b});
  Shape shape = broadcast_shapes(a.shape(), b.shape(), fn);
  DType dt = promote_types(a.dtype(), b.dtype());
  if (op == BinaryOp::Div && !is_floating(dt)) dt = DType::Float32;
  if (dt == DType::Bool) {  // numpy / PyTorch meaning of arithmetic on booleans
    switch (op) {
      case BinaryOp::Add: case BinaryOp::Maximum: return compare_op(CompareOp::LogicalOr, fn, a, b);
      case BinaryOp::Mul: case BinaryOp::Minimum: return compare_op(CompareOp::LogicalAnd, fn, a, b);
      default:
        throw TypeError(std::string(fn) + "(): not supported for two bool tensors; cast one to an integer "
                        "or floating dtype first");
    }
  }
  if (op == BinaryOp::FloorDivide || op == BinaryOp::Remainder || op == BinaryOp::Fmod)
    reject_integer_zero(fn, b, dt, shape);
  if (a.device() == Device::GPU) return gpu::binary(op, a, b, dt);
  Tensor out = Tensor::empty_cpu(shape, dt);
  cpu::binary(op, cast_if_needed(a, dt), cast_if_needed(b, dt), out);
  return out;
}

}  // namespace

Tensor neg(const Tensor& x) { return unary_numeric(UnaryOp::Neg, "neg", x); }
Tensor abs(const Tensor& x) { return unary_numeric(UnaryOp::Abs, "abs", x); }
Tensor sign(const Tensor& x) { return unary_numeric(UnaryOp::Sign, "sign", x); }
Tensor relu(const Tensor& x) { return unary_numeric(UnaryOp::Relu, "relu", x); }

Tensor exp(const Tensor& x) { return unary_float(UnaryOp::Exp, "exp", x); }
Tensor log(const Tensor& x) { return unary_float(UnaryOp::Log, "log", x); }
Tensor sqrt(const Tensor& x) { return unary_float(UnaryOp::Sqrt, "sqrt", x); }
Tensor rsqrt(const Tensor& x) { return unary_float(UnaryOp::Rsqrt, "rsqrt", x); }
Tensor sin(const Tensor& x) { return unary_float(UnaryOp::Sin, "sin", x); }
Tensor cos(const Tensor& x) { return unary_float(UnaryOp::Cos, "cos", x); }
Tensor tanh(const Tensor& x) { return unary_float(UnaryOp::Tanh, "tanh", x); }
Tensor sigmoid(const Tensor& x) { return unary_float(UnaryOp::Sigmoid, "sigmoid", x); }
Tensor erf(const Tensor& x) { return unary_float(UnaryOp::Erf, "erf", x); }
Tensor gelu(const Tensor& x, const std::string& approximate) {
  if (approximate == "none") return unary_float(UnaryOp::Gelu, "gelu", x);
  if (approximate == "tanh") return unary_float(UnaryOp::GeluTanh, "gelu", x);
  throw ValueError("gelu(): argument 'approximate' must be 'none' or 'tanh', got '" + approximate + "'");
}

Tensor floor(const Tensor& x) { return rounding(UnaryOp::Floor, "floor", x); }
Tensor ceil(const Tensor& x) { return rounding(UnaryOp::Ceil, "ceil", x); }
Tensor round(const Tensor& x) { return rounding(UnaryOp::Round, "round", x); }

Tensor isnan(const Tensor& x) { return predicate(PredicateOp::IsNan, "isnan", x, false); }
Tensor isinf(const Tensor& x) { return predicate(PredicateOp::IsInf, "isinf", x, false); }
Tensor isfinite(const Tensor& x) { return predicate(PredicateOp::IsFinite, "isfinite", x, true); }
Tensor logical_not(const Tensor& x) {
  common_device("logical_not", {&x});
  return compare_op(CompareOp::Eq, "logical_not", x, full({}, 0.0, x.dtype(), x.device()));
}

Tensor add(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Add, "add", a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Sub, "sub", a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Mul, "mul", a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Div, "div", a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Pow, "pow", a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Maximum, "maximum", a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Minimum, "minimum", a, b); }

std::optional<Tensor> clamp_fused(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  if (x.device() != Device::CPU || lo.device() != Device::CPU || hi.device() != Device::CPU) return std::nullopt;
  if (!is_integral(x.dtype()) || lo.dtype() != x.dtype() || hi.dtype() != x.dtype()) return std::nullopt;
  if (lo.ndim() != 0 || hi.ndim() != 0 || !x.is_contiguous()) return std::nullopt;
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  cpu::clamp_integer(x, lo, hi, out);
  return out;
}
Tensor floor_divide(const Tensor& a, const Tensor& b) {
  return binary_arith(BinaryOp::FloorDivide, "floor_divide", a, b);
}
Tensor remainder(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Remainder, "remainder", a, b); }
Tensor fmod(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Fmod, "fmod", a, b); }

Tensor eq(const Tensor& a, const Tensor& b) { return compare_op(CompareOp::Eq, "eq", a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare_op(CompareOp::Ne, "ne", a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare_op(CompareOp::Lt, "lt", a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return compare_op(CompareOp::Le, "le", a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare_op(CompareOp::Gt, "gt", a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare_op(CompareOp::Ge, "ge", a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return compare_op(CompareOp::LogicalAnd, "logical_and", a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return compare_op(CompareOp::LogicalOr, "logical_or", a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return compare_op(CompareOp::LogicalXor, "logical_xor", a, b); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  common_device("where", {&cond, &a, &b});
  Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  DType dt = promote_types(a.dtype(), b.dtype());
  if (a.device() == Device::GPU) return gpu::where(cond, a, b, dt);
  Tensor out = Tensor::empty_cpu(shape, dt);
  cpu::where(cast_if_needed(cond, DType::Bool), cast_if_needed(a, dt), cast_if_needed(b, dt), out);
  return out;
}

}  // namespace lucid::ops
