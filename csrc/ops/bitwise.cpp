#include "ops/bitwise.h"

#include <string>

#include "core/errors.h"
#include "cpu/bitwise.h"
#include "gpu/bitwise.h"
#include "ops/copy.h"
#include "ops/shape.h"

namespace lucid::ops {

namespace {

Tensor as_dtype(const Tensor& x, DType dt) { return x.dtype() == dt ? x : astype(x, dt); }

void check_integral(const char* fn, const char* arg, DType dt) {
  if (is_floating(dt))
    throw TypeError(std::string(fn) + "(): '" + arg + "' must be an integer or bool tensor, got " + dtype_name(dt));
}

}  // namespace

Tensor bitwise_binary(BitwiseOp op, const char* fn, const Tensor& a, const Tensor& b) {
  common_device(fn, {&a, &b});
  check_integral(fn, "input", a.dtype());
  check_integral(fn, "other", b.dtype());
  DType dt = promote_types(a.dtype(), b.dtype());
  bool shift = op == BitwiseOp::LeftShift || op == BitwiseOp::RightShift;
  if (shift && dt == DType::Bool) throw TypeError(std::string(fn) + "(): shifts of bool tensors are not defined");
  Shape shape = broadcast_shapes(a.shape(), b.shape(), fn);
  if (a.device() == Device::GPU) return gpu::bitwise_binary(op, as_dtype(a, dt), as_dtype(b, dt));
  Tensor ac = contiguous(expand(as_dtype(a, dt), shape));
  Tensor bc = contiguous(expand(as_dtype(b, dt), shape));
  Tensor out = Tensor::empty_cpu(shape, dt);
  cpu::bitwise_binary(op, ac, bc, out);
  return out;
}

Tensor bitwise_not(const Tensor& x) {
  common_device("bitwise_not", {&x});
  check_integral("bitwise_not", "input", x.dtype());
  if (x.device() == Device::GPU) return gpu::bitwise_not(x);
  Tensor xc = contiguous(x);
  Tensor out = Tensor::empty_cpu(x.shape(), x.dtype());
  cpu::bitwise_not(xc, out);
  return out;
}

}  // namespace lucid::ops
