// fake_quantize_learnable: PyTorch's learnable fake quantization, forward and
// the three gradients (docs/numerics.md gives every rounding step).
#include "cpu/fake_quantize_learnable.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/thread_pool.h"

namespace lucid::cpu {

namespace {

// Returned for NaN inputs so NaN outputs are byte-identical across streams.
constexpr uint32_t kCanonicalNan = 0x7fc00000u;

inline float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Splits the flat element range over the thread pool and hands each chunk to
// fn(c, begin, end) one run of a single channel at a time. Every element's
// value depends only on its own inputs, so the split never changes a bit.
template <class F>
void for_each_run(LearnableView v, F&& fn) {
  const int64_t n = v.outer * v.channels * v.inner;
  parallel_for(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    int64_t k = begin;
    while (k < end) {
      const int64_t row = k / v.inner;
      const int64_t stop = std::min(end, (row + 1) * v.inner);
      fn(row % v.channels, k, stop);
      k = stop;
    }
  });
}

}  // namespace

void fake_quantize_learnable(const float* x, float* y, LearnableView v, const float* s, const float* inv,
                             const float* zf, float lo, float hi) {
  if (v.inner == 0) return;
  for_each_run(v, [&](int64_t c, int64_t begin, int64_t end) {
    const float sc = s[c], ic = inv[c], z = zf[c];
    for (int64_t k = begin; k < end; ++k) {
      float xi = x[k];
      float t = xi * ic;
      float q = z + std::nearbyint(t);
      float out = (clampf(q, lo, hi) - z) * sc;  // clamp(q) - z is an exact small integer
      y[k] = xi != xi ? std::bit_cast<float>(kCanonicalNan) : out;
    }
  });
}

void fake_quantize_learnable_terms(const float* x, const float* dy, float* dx, float* ds, float* dz,
                                   LearnableView v, const float* s, const float* inv, const float* zb, float lo,
                                   float hi, float grad_factor) {
  if (v.inner == 0) return;
  for_each_run(v, [&](int64_t c, int64_t begin, int64_t end) {
    const float sc = s[c], ic = inv[c], z = zb[c];
    const float below_factor = lo - z, above_factor = hi - z;
    for (int64_t k = begin; k < end; ++k) {
      float xi = x[k], g = dy[k];
      float xq = std::nearbyint(z + xi * ic);
      bool in = xq >= lo && xq <= hi;
      bool above = xq > hi;  // NaN is neither in nor above: it takes the "below" branch, as torch on x86
      dx[k] = g * (in ? 1.0f : 0.0f);
      float ds_i, dz_i;
      if (in) {
        float xfq = (xq - z) * sc;
        float prod = g * (xfq - xi);
        float scaled = prod * ic;
        ds_i = scaled * grad_factor;
        dz_i = 0.0f;
      } else {
        float edge = g * (above ? above_factor : below_factor);
        ds_i = edge * grad_factor;
        float neg = -g * sc;
        dz_i = neg * grad_factor;
      }
      ds[k] = ds_i;
      dz[k] = dz_i;
    }
  });
}

void sum_per_channel(const float* terms, LearnableView v, float* out) {
  for (int64_t c = 0; c < v.channels; ++c) {
    double acc = 0.0;
    for (int64_t o = 0; o < v.outer; ++o) {
      const float* row = terms + (o * v.channels + c) * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) acc += static_cast<double>(row[i]);
    }
    out[c] = static_cast<float>(acc);
  }
}

}  // namespace lucid::cpu
