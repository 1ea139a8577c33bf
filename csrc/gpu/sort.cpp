// GPU-stream sort. MLX sorts ascending (stably, NaN last), so descending is
// done by sorting the reversed line ascending and reading the result back to
// front: equal keys then come out in increasing input position, as on the
// CPU stream, and NaN comes first.
#include "gpu/sort.h"

#include "gpu/array.h"

namespace lucid::gpu {

std::pair<Tensor, Tensor> sort(const Tensor& x, int axis, bool descending) {
  auto s = stream();
  mx::array a = array_of(x);
  mx::Dtype dt = a.dtype();
  bool scalar = x.ndim() == 0;
  if (scalar) a = mx::reshape(a, {1}, s);
  if (dt == mx::bool_) a = mx::astype(a, mx::uint8, s);
  int n = a.shape(axis);
  mx::array idx = mx::zeros({0}, mx::int64, s);
  if (!descending) {
    idx = mx::astype(mx::argsort(a, axis, s), mx::int64, s);
  } else {
    mx::array rev = mx::arange(n - 1, -1, -1, mx::int32, s);
    mx::array flipped = mx::take(a, rev, axis, s);
    mx::array order = mx::take(mx::astype(mx::argsort(flipped, axis, s), mx::int64, s), rev, axis, s);
    idx = mx::subtract(mx::array(static_cast<int64_t>(n - 1), mx::int64), order, s);
  }
  mx::array vals = mx::take_along_axis(array_of(x).ndim() == 0 ? mx::reshape(array_of(x), {1}, s) : array_of(x),
                                       idx, axis, s);
  if (scalar) {
    vals = mx::reshape(vals, {}, s);
    idx = mx::reshape(idx, {}, s);
  }
  return {wrap(vals), wrap(idx)};
}

}  // namespace lucid::gpu
