// The weight-only GEMV driver: each activation row is laid out once for the
// kernels (kernels::qfw_prepare_x), then the output rows are split over the
// thread pool in units of about 64 KB of codes, one kernel call each for all
// the activation rows (the kernel decodes a block once for several rows, or
// reads the unit's codes again from cache).
#include "cpu/weight_gemv.h"

#include <algorithm>
#include <vector>

#include "core/thread_pool.h"

namespace lucid::cpu {

void qfw_linear(kernels::QfwFormat f, const float* x, int64_t M, int64_t K, const uint8_t* w, int64_t N,
                const float* s, int64_t s_stride, const uint8_t* sc, int64_t G, const float* gb, const float* bias,
                float* y, bool reference) {
  const kernels::qfw_gemv_fn gemv = reference ? &kernels::f32_qfw_gemv_scalar : kernels::f32_qfw_gemv_best();
  const size_t Ks = static_cast<size_t>(K), Gs = static_cast<size_t>(G);
  const int64_t xl = static_cast<int64_t>(kernels::qfw_xp_len(f, Ks, Gs));
  const int64_t rb = static_cast<int64_t>(kernels::qfw_row_bytes(f, Ks));
  const int64_t groups = kernels::qfw_row_scale(f) ? 0 : K / static_cast<int64_t>(kernels::qfw_group(f, Gs));
  std::vector<float> xp(static_cast<size_t>(M * xl));
  for (int64_t m = 0; m < M; ++m) kernels::qfw_prepare_x(f, Ks, Gs, x + m * K, xp.data() + m * xl);
  const int64_t unit = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(rb, 1));
  auto run = [&](int64_t lo, int64_t hi) {
    for (int64_t c0 = lo; c0 < hi; c0 += unit) {
      const int64_t c1 = std::min(hi, c0 + unit);
      gemv(f, Ks, static_cast<size_t>(c1 - c0), xp.data(), w + c0 * rb, s ? s + c0 * s_stride : nullptr,
           static_cast<size_t>(s_stride), sc ? sc + c0 * groups : nullptr, Gs, gb ? gb + c0 * s_stride : nullptr,
           bias ? bias + c0 : nullptr, y + c0, static_cast<size_t>(M), static_cast<size_t>(N));
    }
  };
  if (reference) run(0, N);
  else parallel_for(N, unit, run);
}

}  // namespace lucid::cpu
