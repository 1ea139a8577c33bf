#include "gpu/scan.h"

#include "gpu/array.h"

namespace lucid::gpu {

namespace {

Tensor scan(bool product, const Tensor& x, int axis) {
  auto s = stream();
  mx::array a = array_of(x);
  mx::Dtype dt = a.dtype();
  bool half = dt == mx::float16 || dt == mx::bfloat16;
  mx::array w = half ? mx::astype(a, mx::float32, s) : a;
  if (x.ndim() == 0) w = mx::reshape(w, {1}, s);
  mx::array r = product ? mx::cumprod(w, x.ndim() == 0 ? 0 : axis, false, true, s)
                        : mx::cumsum(w, x.ndim() == 0 ? 0 : axis, false, true, s);
  if (x.ndim() == 0) r = mx::reshape(r, {}, s);
  return wrap(half ? mx::astype(r, dt, s) : r);
}

}  // namespace

Tensor cumsum(const Tensor& x, int axis) { return scan(false, x, axis); }
Tensor cumprod(const Tensor& x, int axis) { return scan(true, x, axis); }

}  // namespace lucid::gpu
