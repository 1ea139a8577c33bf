#include "ops/scan.h"

#include "core/errors.h"
#include "cpu/scan.h"
#include "gpu/scan.h"
#include "ops/copy.h"

namespace lucid::ops {

namespace {

Tensor scan(bool product, const char* fn, const Tensor& x, int64_t dim) {
  common_device(fn, {&x});
  int axis = normalize_axis(dim, x.ndim(), fn, "dim");
  DType dt = is_floating(x.dtype()) ? x.dtype() : DType::Int64;
  Tensor xc = x.dtype() == dt ? x : astype(x, dt);
  if (x.device() == Device::GPU) return product ? gpu::cumprod(xc, axis) : gpu::cumsum(xc, axis);
  xc = contiguous(xc);
  Tensor out = Tensor::empty_cpu(x.shape(), dt);
  if (product) cpu::cumprod(xc, x.ndim() == 0 ? 0 : axis, out);
  else cpu::cumsum(xc, x.ndim() == 0 ? 0 : axis, out);
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim) { return scan(false, "cumsum", x, dim); }
Tensor cumprod(const Tensor& x, int64_t dim) { return scan(true, "cumprod", x, dim); }

}  // namespace lucid::ops
