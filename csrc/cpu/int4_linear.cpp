// int4_weight_only_linear on the CPU stream: each activation row is
// prepared once (permuted to the nibble order, group sums), then the output
// columns are split over the thread pool, each chunk one microkernel call
// that streams its rows of packed weights.
#include "cpu/int4_linear.h"

#include <vector>

#include "core/thread_pool.h"
#include "cpu/kernels/qb4w-gemv.h"

namespace lucid::cpu {

void int4_weight_only_linear(const Tensor& x, const Tensor& w, const float* scale, const int32_t* zq, uint8_t flip,
                             int64_t group_size, const float* bias, const Tensor& out, bool reference) {
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0), G = group_size, groups = K / G;
  kernels::qb4w_gemv_fn gemv = reference ? &kernels::f32_qb4w_gemv_scalar : kernels::f32_qb4w_gemv_best();
  const float* px = x.data<float>();
  const uint8_t* pw = w.data<uint8_t>();
  float* py = out.data<float>();
  std::vector<float> xp(static_cast<size_t>(K)), sx(static_cast<size_t>(groups));
  // About 64 KB of packed weights per task: enough work to amortise a task.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(K / 2, 1));
  for (int64_t m = 0; m < M; ++m) {
    kernels::f32_qb4w_prepare_x(K, G, px + m * K, xp.data(), sx.data());
    auto run = [&](int64_t lo, int64_t hi) {
      gemv(K, G, hi - lo, xp.data(), sx.data(), pw + lo * (K / 2), scale + lo * groups, zq + lo * groups, flip,
           bias ? bias + lo : nullptr, py + m * N + lo);
    };
    if (reference) run(0, N);
    else parallel_for(N, grain, run);
  }
}

}  // namespace lucid::cpu
