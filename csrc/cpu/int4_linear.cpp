// int4_weight_only_linear on the CPU stream. Few activation rows (the
// memory-bound decoding case): each row is prepared once (permuted to the
// nibble order, group sums), then the output columns are split over the
// thread pool, each chunk one GEMV microkernel call that streams its rows of
// packed weights. From kGemmRows rows on, the product is compute-bound and
// re-streaming the weights per row loses to dequantizing them once (to
// exactly dequantize's float values) and calling sgemm.
#include "cpu/int4_linear.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/blas.h"
#include "cpu/kernels/qb4w-gemv.h"
#include "cpu/kernels/qd8-qb4w-gemv.h"
#include "cpu/kernels/vquant.h"

namespace lucid::cpu {

namespace {

constexpr int64_t kGemmRows = 16;

// w = fl(float(q - z) * s) for every weight, with q - z = (nib ^ flip) - zq.
void dequantize_weights(const uint8_t* pw, int64_t N, int64_t K, int64_t G, const float* scale, const int32_t* zq,
                        uint8_t flip, float* wf) {
  const auto& k = kernels::vquant_best();
  const int64_t groups = K / G;
  parallel_for(N, std::max<int64_t>(1, (int64_t{1} << 14) / K), [&](int64_t lo, int64_t hi) {
    std::vector<uint8_t> codes(static_cast<size_t>(K));
    for (int64_t n = lo; n < hi; ++n) {
      k.unpack4(K / 2, pw + n * (K / 2), codes.data(), false);
      if (flip)
        for (auto& c : codes) c = static_cast<uint8_t>(c ^ 8u);
      k.dequantize_qu8(groups, G, codes.data(), wf + n * K, scale + n * groups, zq + n * groups, 0);
    }
  });
}

#if defined(__x86_64__) && defined(__GNUC__)
#define LUCID_INT4_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LUCID_INT4_CLONES
#endif

// As int32, a float is finite and > 0 exactly when 0 < bits < 0x7f800000
// (negatives and -0 have the sign bit; inf and NaN are 0x7f800000 and up):
// a min / max reduction that vectorizes.
LUCID_INT4_CLONES bool scales_ok(const float* s, int64_t n) {
  int32_t lo = INT32_MAX, hi = 1;
  for (int64_t i = 0; i < n; ++i) {
    int32_t b;
    std::memcpy(&b, s + i, 4);
    lo = std::min(lo, b);
    hi = std::max(hi, b);
  }
  return lo > 0 && hi < 0x7f800000;
}

// max |x[k]| as bits (positive floats order as their bits), and whether every
// x[k] is finite: one pass that vectorizes.
LUCID_INT4_CLONES uint32_t abs_max_bits(const float* x, int64_t n) {
  uint32_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, x + i, 4);
    m = std::max(m, b & 0x7fffffffu);
  }
  return m;
}

}  // namespace

int64_t first_bad_scale(const float* scale, int64_t n) {
  if (scales_ok(scale, n)) return -1;
  for (int64_t i = 0; i < n; ++i)
    if (!(std::isfinite(scale[i]) && scale[i] > 0.0f)) return i;
  return -1;
}

void int4_weight_only_linear(const Tensor& x, const Tensor& w, const float* scale, const int32_t* zq, uint8_t flip,
                             int64_t group_size, const float* bias, const Tensor& out, bool reference) {
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0), G = group_size, groups = K / G;
  kernels::qb4w_gemv_fn gemv = reference ? &kernels::f32_qb4w_gemv_scalar : kernels::f32_qb4w_gemv_best();
  const float* px = x.data<float>();
  const uint8_t* pw = w.data<uint8_t>();
  float* py = out.data<float>();
  if (K == 0) {  // an empty sum: y = bias (or 0), without asking BLAS about k = 0
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) py[m * N + n] = bias ? bias[n] : 0.0f;
    return;
  }
  if (!reference && M >= kGemmRows) {
    Tensor wf = Tensor::empty_cpu({N, K}, DType::Float32);
    std::vector<int32_t> eights;  // the dequantize kernel reads an array of zero points
    if (!zq) eights.assign(static_cast<size_t>(N * groups), 8);
    dequantize_weights(pw, N, K, G, scale, zq ? zq : eights.data(), flip, wf.data<float>());
    blas::sgemm(false, true, M, N, K, 1.0f, px, K, wf.data<float>(), K, 0.0f, py, N);
    if (bias)
      parallel_for(M, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t m = lo; m < hi; ++m)
          for (int64_t n = 0; n < N; ++n) py[m * N + n] = py[m * N + n] + bias[n];
      });
    return;
  }
  std::vector<float> xp(static_cast<size_t>(K)), sx(static_cast<size_t>(groups));
  // About 64 KB of packed weights per task: enough work to amortise a task.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(K / 2, 1));
  for (int64_t m = 0; m < M; ++m) {
    kernels::f32_qb4w_prepare_x(K, G, px + m * K, xp.data(), sx.data());
    auto run = [&](int64_t lo, int64_t hi) {
      gemv(K, G, hi - lo, xp.data(), sx.data(), pw + lo * (K / 2), scale + lo * groups,
           zq ? zq + lo * groups : nullptr, flip, bias ? bias + lo : nullptr, py + m * N + lo);
    };
    if (reference) run(0, N);
    else parallel_for(N, grain, run);
  }
}

int64_t int4_weight_only_linear_qd8(const Tensor& x, const Tensor& w, const float* scale, const int32_t* zq,
                                    uint8_t flip, int64_t group_size, const float* bias, const Tensor& out,
                                    bool reference) {
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0), G = group_size, groups = K / G;
  const int64_t Kp = static_cast<int64_t>(kernels::qd8_qb4w_padded(static_cast<size_t>(K)));
  kernels::qd8_qb4w_gemv_fn gemv = reference ? &kernels::qd8_qb4w_gemv_scalar : kernels::qd8_qb4w_gemv_best();
  const auto& vq = reference ? kernels::vquant_scalar() : kernels::vquant_best();
  const float* px = x.data<float>();
  const uint8_t* pw = w.data<uint8_t>();
  float* py = out.data<float>();
  // Per row: amax (exact), sa = max(fl(amax / 127), 2^-126), the codes
  // (quantize's kernel, z = 0, grid [-127, 127]) in the kernels' layout, and
  // the group sums of the codes.
  std::vector<int8_t> xp(static_cast<size_t>(M * Kp)), xq(static_cast<size_t>(K));
  std::vector<int32_t> sx(static_cast<size_t>(M * groups));
  std::vector<float> sa(static_cast<size_t>(M));
  std::vector<uint8_t> finite(static_cast<size_t>(M));
  const float tiny = std::ldexp(1.0f, -126);
  const int32_t zero = 0;
  for (int64_t m = 0; m < M; ++m) {
    const float* xm = px + m * K;
    const uint32_t amax_bits = abs_max_bits(xm, K);
    finite[m] = amax_bits < 0x7f800000u;
    if (!finite[m]) continue;
    float amax;
    std::memcpy(&amax, &amax_bits, 4);
    float q = amax / 127.0f;
    sa[m] = q > tiny ? q : tiny;
    if (K > 0) vq.quantize_qs8(1, static_cast<size_t>(K), xm, xq.data(), &sa[m], &zero, 0, -127.0f, 127.0f);
    kernels::qd8_qb4w_prepare_x(static_cast<size_t>(K), static_cast<size_t>(G), xq.data(), xp.data() + m * Kp,
                                sx.data() + m * groups);
  }
  uint32_t nan_bits = 0x7fc00000u;
  float nan;
  std::memcpy(&nan, &nan_bits, 4);
  // Units of about 64 KB of packed weights (whole 8-column tiles): a pool
  // task is one or more of them, and each unit's scales are checked just
  // before the kernel reads them (from L1 then, and even with one thread).
  int64_t unit = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(K / 2, 1));
  unit = (unit + 7) / 8 * 8;
  std::atomic<int64_t> bad{N * groups};  // first bad scale index seen (N * groups: none)
  auto run = [&](int64_t lo, int64_t hi) {
    for (int64_t c0 = lo; c0 < hi; c0 += unit) {
      const int64_t c1 = std::min(hi, c0 + unit);
      if (int64_t b = first_bad_scale(scale + c0 * groups, (c1 - c0) * groups); b >= 0) {
        int64_t idx = c0 * groups + b, seen = bad.load();
        while (idx < seen && !bad.compare_exchange_weak(seen, idx)) {
        }
        return;
      }
      for (int64_t m = 0; m < M; ++m) {
        float* ym = py + m * N;
        if (!finite[m]) {
          std::fill(ym + c0, ym + c1, nan);
          continue;
        }
        gemv(static_cast<size_t>(K), static_cast<size_t>(G), static_cast<size_t>(c1 - c0), xp.data() + m * Kp,
             sx.data() + m * groups, sa[m], pw + c0 * (K / 2), scale + c0 * groups, zq ? zq + c0 * groups : nullptr,
             flip, bias ? bias + c0 : nullptr, ym + c0);
      }
    }
  };
  if (reference) run(0, N);
  else parallel_for(N, unit, run);
  return bad.load() < N * groups ? bad.load() : -1;
}

}  // namespace lucid::cpu
