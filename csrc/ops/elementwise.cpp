#include "ops/elementwise.h"

#include "core/elementwise_kind.h"
#include "core/errors.h"
#include "cpu/elementwise.h"
#include "gpu/elementwise.h"
#include "ops/copy.h"

namespace lucid::ops {

namespace {

Tensor cast_if_needed(const Tensor& x, DType dtype) { return x.dtype() == dtype ? x : astype(x, dtype); }

Tensor unary_float(UnaryOp op, const char* fn, const Tensor& x) {
  common_device(fn, {&x});
  // Transcendental ops compute in float: integer inputs promote to float32.
  DType dt = is_floating(x.dtype()) ? x.dtype() : DType::Float32;
  if (x.device() == Device::GPU) return gpu::unary(op, cast_if_needed(x, dt));
  Tensor xc = contiguous(cast_if_needed(x, dt));
  Tensor out = Tensor::empty_cpu(x.shape(), dt);
  cpu::unary(op, xc, out);
  return out;
}

Tensor unary_numeric(UnaryOp op, const char* fn, const Tensor& x) {
  common_device(fn, {&x});
  check<TypeError>(x.dtype() != DType::Bool,
                   std::string(fn) + "(): argument 'input' must be a numeric tensor, got bool");
  if (x.device() == Device::GPU) return gpu::unary(op, x);
  Tensor xc = contiguous(x);
  Tensor out = Tensor::empty_cpu(x.shape(), x.dtype());
  cpu::unary(op, xc, out);
  return out;
}

Tensor binary_arith(BinaryOp op, const char* fn, const Tensor& a, const Tensor& b, bool true_div = false) {
  common_device(fn, {&a, &b});
  Shape shape = broadcast_shapes(a.shape(), b.shape(), fn);
  DType dt = promote_types(a.dtype(), b.dtype());
  if (dt == DType::Bool) dt = true_div ? DType::Float32 : DType::UInt8;
  if (true_div && !is_floating(dt)) dt = DType::Float32;
  if (a.device() == Device::GPU) return gpu::binary(op, a, b, dt);
  Tensor out = Tensor::empty_cpu(shape, dt);
  cpu::binary(op, cast_if_needed(a, dt), cast_if_needed(b, dt), out);
  return out;
}

}  // namespace

Tensor neg(const Tensor& x) { return unary_numeric(UnaryOp::Neg, "neg", x); }
Tensor exp(const Tensor& x) { return unary_float(UnaryOp::Exp, "exp", x); }

Tensor add(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Add, "add", a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Sub, "sub", a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Mul, "mul", a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary_arith(BinaryOp::Div, "div", a, b, true); }

}  // namespace lucid::ops
