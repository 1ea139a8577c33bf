#include "gpu/histogram.h"

#include "gpu/array.h"

namespace lucid::gpu {

Tensor histc(const Tensor& x, int64_t bins, float lo, float hi, bool wide) {
  auto s = stream();
  mx::array a = mx::reshape(mx::astype(array_of(x), mx::float32, s), {-1}, s);
  if (a.size() == 0) return wrap(mx::zeros({static_cast<int>(bins)}, mx::int64, s));
  // The bin index of docs/numerics.md as separate, correctly rounded MLX ops,
  // in the same regime (ordinary or wide) as the CPU stream.
  auto f32 = [](float v) { return mx::array(v, mx::float32); };
  mx::array nb = f32(static_cast<float>(bins));
  mx::array in = mx::logical_and(mx::greater_equal(a, f32(lo), s), mx::less_equal(a, f32(hi), s), s);
  mx::array t = mx::array(0.0f);
  if (!wide) {
    t = mx::divide(mx::multiply(mx::subtract(a, f32(lo), s), nb, s), f32(hi - lo), s);
  } else {
    // Halved before the subtraction, scaled by 2^-24 before the product:
    // no intermediate can overflow (the CPU kernel's statements).
    volatile float lo_h = lo * 0.5f, hi_h = hi * 0.5f;
    volatile float wd = hi_h - lo_h;
    const float den = wd * 0x1p-24f;
    mx::array d = mx::subtract(mx::multiply(a, f32(0.5f), s), f32(lo_h), s);
    t = mx::divide(mx::multiply(mx::multiply(d, f32(0x1p-24f), s), nb, s), f32(den), s);
  }
  // Only in-range values reach the cast; the others count into an extra bin
  // that is dropped. The index is clipped to [0, bins] after the cast as well,
  // so no value the cast could produce can address memory outside the counts.
  t = mx::where(in, t, nb, s);
  mx::array k = mx::astype(t, mx::int32, s);
  k = mx::clip(k, mx::array(int32_t{0}), mx::array(static_cast<int32_t>(bins - 1)), s);
  k = mx::where(in, k, mx::array(static_cast<int32_t>(bins)), s);
  mx::array ones = mx::ones({static_cast<int>(a.size()), 1}, mx::int32, s);
  mx::array counts = mx::scatter_add(mx::zeros({static_cast<int>(bins + 1)}, mx::int32, s), k, ones, 0, s);
  return wrap(mx::astype(mx::slice(counts, {0}, {static_cast<int>(bins)}, s), mx::int64, s));
}

}  // namespace lucid::gpu
