#include "gpu/linalg.h"

#include <algorithm>

#include "core/errors.h"
#include "gpu/array.h"

namespace lucid::gpu {

Tensor matmul(const Tensor& a, const Tensor& b) {
  auto s = stream();
  const mx::array& x = array_of(a);
  const mx::array& y = array_of(b);
  mx::Dtype dt = x.dtype();
  if (mx::issubdtype(dt, mx::floating)) {
    mx::array r = matmul_checked(mx::astype(x, mx::float32, s), mx::astype(y, mx::float32, s), s);
    return wrap(mx::astype(r, dt, s));
  }
  // x[..., m, k, 1] * y[..., 1, k, n] summed over k, in slices of k that
  // keep the broadcast product near 16M elements.
  int nd = x.ndim();
  int m = x.shape(nd - 2), k = x.shape(nd - 1), n = y.shape(nd - 1);
  mx::array xi = mx::expand_dims(mx::astype(x, mx::int64, s), nd, s);      // (..., m, k, 1)
  mx::array yi = mx::expand_dims(mx::astype(y, mx::int64, s), nd - 2, s);  // (..., 1, k, n)
  int64_t per_k = std::max<int64_t>(1, static_cast<int64_t>(m) * n);
  for (int d = 0; d < nd - 2; ++d) per_k *= std::max(x.shape(d), y.shape(d));
  int step = static_cast<int>(std::clamp<int64_t>((int64_t{1} << 24) / per_k, 1, std::max(k, 1)));
  mx::Shape out_shape(nd);  // ops/linalg.cpp gives both operands nd axes with broadcastable batch dims
  for (int d = 0; d < nd - 2; ++d) out_shape[d] = std::max(x.shape(d), y.shape(d));
  out_shape[nd - 2] = m;
  out_shape[nd - 1] = n;
  mx::array acc = mx::zeros(out_shape, mx::int64, s);
  for (int k0 = 0; k0 < k; k0 += step) {
    int k1 = std::min(k, k0 + step);
    mx::Shape xs_start(nd + 1, 0), xs_stop = xi.shape();
    xs_start[nd - 1] = k0;
    xs_stop[nd - 1] = k1;
    mx::Shape ys_start(nd + 1, 0), ys_stop = yi.shape();
    ys_start[nd - 1] = k0;
    ys_stop[nd - 1] = k1;
    mx::array prod = mx::multiply(mx::slice(xi, xs_start, xs_stop, s), mx::slice(yi, ys_start, ys_stop, s), s);
    acc = mx::add(acc, mx::sum(prod, nd - 1, false, s), s);
  }
  return wrap(mx::astype(acc, dt, s));
}

}  // namespace lucid::gpu
