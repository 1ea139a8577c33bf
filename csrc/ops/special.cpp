#include "ops/special.h"

#include "core/errors.h"
#include "cpu/special.h"
#include "gpu/special.h"
#include "ops/copy.h"
#include "ops/shape.h"

namespace lucid::ops {

namespace {

Tensor as_float(const Tensor& x, DType dt) { return x.dtype() == dt ? x : astype(x, dt); }

Tensor special(SpecialOp op, const char* fn, const Tensor& x) {
  common_device(fn, {&x});
  DType dt = is_floating(x.dtype()) ? x.dtype() : DType::Float32;
  if (x.device() == Device::GPU) return gpu::special_unary(op, as_float(x, dt));
  Tensor xc = contiguous(as_float(x, dt));
  Tensor out = Tensor::empty_cpu(x.shape(), dt);
  cpu::special_unary(op, xc, out);
  return out;
}

}  // namespace

Tensor log1p(const Tensor& x) { return special(SpecialOp::Log1p, "log1p", x); }
Tensor expm1(const Tensor& x) { return special(SpecialOp::Expm1, "expm1", x); }
Tensor log2(const Tensor& x) { return special(SpecialOp::Log2, "log2", x); }

Tensor atan2(const Tensor& y, const Tensor& x) {
  common_device("atan2", {&y, &x});
  Shape shape = broadcast_shapes(y.shape(), x.shape(), "atan2");
  DType dt = promote_types(y.dtype(), x.dtype());
  if (!is_floating(dt)) dt = DType::Float32;
  if (y.device() == Device::GPU) return gpu::atan2(y, x, dt);
  Tensor yc = contiguous(expand(as_float(y, dt), shape));
  Tensor xc = contiguous(expand(as_float(x, dt), shape));
  Tensor out = Tensor::empty_cpu(shape, dt);
  cpu::atan2(yc, xc, out);
  return out;
}

}  // namespace lucid::ops
