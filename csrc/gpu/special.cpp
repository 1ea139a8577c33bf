// GPU-stream log1p, expm1, log2, atan2 over MLX's own kernels.
#include "gpu/special.h"

#include "gpu/array.h"

namespace lucid::gpu {

Tensor special_unary(SpecialOp op, const Tensor& x) {
  auto s = stream();
  mx::array a = array_of(x);
  mx::Dtype dt = a.dtype();
  mx::array w = mx::astype(a, mx::float32, s);
  mx::array r = op == SpecialOp::Log1p   ? mx::log1p(w, s)
                : op == SpecialOp::Expm1 ? mx::expm1(w, s)
                                              : mx::log2(w, s);
  return wrap(mx::astype(r, dt, s));
}

Tensor atan2(const Tensor& y, const Tensor& x, DType dtype) {
  auto s = stream();
  mx::array a = mx::astype(array_of(y), mx::float32, s);
  mx::array b = mx::astype(array_of(x), mx::float32, s);
  return wrap(mx::astype(mx::arctan2(a, b, s), to_mx(dtype), s));
}

}  // namespace lucid::gpu
