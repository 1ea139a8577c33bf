#include "ops/math.h"

#include <string>

#include "core/errors.h"
#include "cpu/math.h"
#include "gpu/math.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/shape.h"

namespace lucid::ops {

namespace {

Tensor as_dtype(const Tensor& x, DType dt) { return x.dtype() == dt ? x : astype(x, dt); }

}  // namespace

Tensor math_unary(MathUnaryOp op, const char* fn, const Tensor& x) {
  common_device(fn, {&x});
  bool floating = is_floating(x.dtype());
  if (op == MathUnaryOp::Trunc && !floating) {
    if (x.dtype() == DType::Bool) throw TypeError(std::string(fn) + "(): 'input' must not be a bool tensor");
    return astype(x, x.dtype());  // integers are already whole: a copy
  }
  if (op == MathUnaryOp::Frac && !floating)
    throw TypeError(std::string(fn) + "(): 'input' must be a floating tensor, got " + dtype_name(x.dtype()));
  DType dt = floating ? x.dtype() : DType::Float32;
  if (x.device() == Device::GPU) return gpu::math_unary(op, as_dtype(x, dt));
  Tensor xc = contiguous(as_dtype(x, dt));
  Tensor out = Tensor::empty_cpu(x.shape(), dt);
  cpu::math_unary(op, xc, out);
  return out;
}

Tensor math_predicate(MathPredicate op, const char* fn, const Tensor& x) {
  common_device(fn, {&x});
  if (x.device() == Device::GPU) return gpu::math_predicate(op, x);
  Tensor xc = contiguous(x);
  Tensor out = Tensor::empty_cpu(x.shape(), DType::Bool);
  cpu::math_predicate(op, xc, out);
  return out;
}

Tensor math_binary(MathBinaryOp op, const char* fn, const Tensor& a, const Tensor& b) {
  common_device(fn, {&a, &b});
  DType dt = promote_types(a.dtype(), b.dtype());
  if (!is_floating(dt)) {
    if (op == MathBinaryOp::Fmax) return maximum(a, b);  // no NaN among integers
    if (op == MathBinaryOp::Fmin) return minimum(a, b);
    if (op == MathBinaryOp::Nextafter)
      throw TypeError(std::string(fn) + "(): 'input' and 'other' must be floating tensors, got " +
                      dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
    dt = DType::Float32;
  }
  Shape shape = broadcast_shapes(a.shape(), b.shape(), fn);
  if (a.device() == Device::GPU) return gpu::math_binary(op, as_dtype(a, dt), as_dtype(b, dt));
  Tensor ac = contiguous(expand(as_dtype(a, dt), shape));
  Tensor bc = contiguous(expand(as_dtype(b, dt), shape));
  Tensor out = Tensor::empty_cpu(shape, dt);
  cpu::math_binary(op, ac, bc, out);
  return out;
}

}  // namespace lucid::ops
