#include "gpu/histogram.h"

#include "gpu/array.h"

namespace lucid::gpu {

Tensor histc(const Tensor& x, int64_t bins, float lo, float hi) {
  auto s = stream();
  mx::array a = mx::reshape(mx::astype(array_of(x), mx::float32, s), {-1}, s);
  if (a.size() == 0) return wrap(mx::zeros({static_cast<int>(bins)}, mx::int64, s));
  // The bin index of docs/numerics.md as separate, correctly rounded MLX ops.
  mx::array flo = mx::array(lo, mx::float32);
  mx::array in = mx::logical_and(mx::greater_equal(a, flo, s), mx::less_equal(a, mx::array(hi, mx::float32), s), s);
  mx::array t = mx::divide(mx::multiply(mx::subtract(a, flo, s), mx::array(static_cast<float>(bins), mx::float32), s),
                           mx::array(hi - lo, mx::float32), s);
  // Only in-range values reach the cast; the others count into an extra bin that is dropped.
  t = mx::where(in, t, mx::array(static_cast<float>(bins), mx::float32), s);
  mx::array k = mx::astype(t, mx::int32, s);
  k = mx::where(in, mx::minimum(k, mx::array(static_cast<int32_t>(bins - 1)), s),
                mx::array(static_cast<int32_t>(bins)), s);
  mx::array ones = mx::ones({static_cast<int>(a.size()), 1}, mx::int32, s);
  mx::array counts = mx::scatter_add(mx::zeros({static_cast<int>(bins + 1)}, mx::int32, s), k, ones, 0, s);
  return wrap(mx::astype(mx::slice(counts, {0}, {static_cast<int>(bins)}, s), mx::int64, s));
}

}  // namespace lucid::gpu
