#include "cpu/histogram.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "core/dispatch.h"
#include "core/thread_pool.h"

#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__clang__)
#define LUCID_HIST_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LUCID_HIST_CLONES
#endif

namespace lucid::cpu {

namespace {

constexpr int64_t kBlock = 1024;   // bin indices computed (vectorized) per block, then counted
constexpr int64_t kTask = 1 << 18;  // elements per parallel task

// Bin index of each element (docs/numerics.md, "Histogram bin index"), -1 for
// elements outside [lo, hi] and NaN. The select happens before the cast, so
// only in-range values are converted (the cast of NaN / inf is undefined).
// Ordinary ranges (fl(fl(hi - lo) * bins) finite): PyTorch's formula. Wide
// ranges: the operands are halved before the subtraction and the difference
// scaled by 2^-24 before the multiplication by bins, so no intermediate can
// overflow; `lo_h`, `den` are the host-computed fl(lo * 0.5) and
// fl(fl(fl(hi * 0.5) - lo_h) * 2^-24).
template <class T>
LUCID_HIST_CLONES void bin_indices(const T* x, int64_t n, float lo, float hi, float nb, float den, int32_t last,
                                   int32_t* idx) {
  for (int64_t i = 0; i < n; ++i) {
    float v = static_cast<float>(static_cast<compute_t<T>>(x[i]));
    bool in = v >= lo && v <= hi;
    float d = v - lo;
    float s = d * nb;
    float t = s / den;
    t = in ? t : -1.0f;
    int32_t k = static_cast<int32_t>(t);
    idx[i] = k < last ? k : last;
  }
}

template <class T>
LUCID_HIST_CLONES void bin_indices_wide(const T* x, int64_t n, float lo, float hi, float lo_h, float nb, float den,
                                        int32_t last, int32_t* idx) {
  for (int64_t i = 0; i < n; ++i) {
    float v = static_cast<float>(static_cast<compute_t<T>>(x[i]));
    bool in = v >= lo && v <= hi;
    float h = v * 0.5f;
    float d = h - lo_h;
    float ds = d * 0x1p-24f;
    float s = ds * nb;
    float t = s / den;
    t = in ? t : -1.0f;
    int32_t k = static_cast<int32_t>(t);
    idx[i] = k < last ? k : last;
  }
}

template <class T>
void count_range(const T* x, int64_t n, int64_t bins, float lo, float hi, bool wide, int64_t* counts) {
  const float nb = static_cast<float>(bins);
  volatile float lo_h = lo * 0.5f, hi_h = hi * 0.5f;  // volatile: the separate roundings of the contract
  volatile float wd = hi_h - lo_h;
  const float den = wide ? static_cast<float>(wd * 0x1p-24f) : hi - lo;
  const int32_t last = static_cast<int32_t>(bins - 1);
  // Two sub-histograms, so runs of equal bins do not serialize on one counter.
  std::vector<int64_t> c2(static_cast<size_t>(bins) * 2, 0);
  int32_t idx[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    int64_t m = std::min(kBlock, n - b);
    if (wide)
      bin_indices_wide<T>(x + b, m, lo, hi, lo_h, nb, den, last, idx);
    else
      bin_indices<T>(x + b, m, lo, hi, nb, den, last, idx);
    int64_t i = 0;
    for (; i + 2 <= m; i += 2) {
      int32_t a = idx[i], c = idx[i + 1];
      if (a >= 0) ++c2[a];
      if (c >= 0) ++c2[bins + c];
    }
    if (i < m && idx[i] >= 0) ++c2[idx[i]];
  }
  for (int64_t k = 0; k < bins; ++k) counts[k] += c2[k] + c2[bins + k];
}

}  // namespace

Tensor histc(const Tensor& x, int64_t bins, float lo, float hi, bool wide) {
  Tensor out = Tensor::empty_cpu({bins}, DType::Int64);
  int64_t* counts = out.data<int64_t>();
  std::fill(counts, counts + bins, 0);
  const int64_t n = x.numel();
  if (n == 0) return out;
  dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* p = x.data<T>();
      int64_t tasks = (n + kTask - 1) / kTask;
      std::mutex mu;
      // Integer counts: merging the tasks' partial histograms in any order is exact.
      parallel_for(tasks, 1, [&](int64_t t0, int64_t t1) {
        std::vector<int64_t> local(bins, 0);
        for (int64_t t = t0; t < t1; ++t) {
          int64_t b = t * kTask;
          count_range<T>(p + b, std::min(kTask, n - b), bins, lo, hi, wide, local.data());
        }
        std::lock_guard<std::mutex> g(mu);
        for (int64_t k = 0; k < bins; ++k) counts[k] += local[k];
      });
    }
  });
  return out;
}

}  // namespace lucid::cpu
