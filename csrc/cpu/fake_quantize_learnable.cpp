// fake_quantize_learnable: PyTorch's learnable fake quantization, forward and
// the three gradients (docs/numerics.md gives every rounding step).
#include "cpu/fake_quantize_learnable.h"

#include <bit>
#include <cmath>

namespace lucid::cpu {

namespace {

// Returned for NaN inputs so NaN outputs are byte-identical across streams.
constexpr uint32_t kCanonicalNan = 0x7fc00000u;

inline float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

}  // namespace

void fake_quantize_learnable(const float* x, float* y, LearnableView v, const float* s, const float* inv,
                             const float* zf, float lo, float hi) {
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t c = 0; c < v.channels; ++c) {
      const int64_t base = (o * v.channels + c) * v.inner;
      const float sc = s[c], ic = inv[c], z = zf[c];
      for (int64_t i = 0; i < v.inner; ++i) {
        float xi = x[base + i];
        float t = xi * ic;
        float q = z + std::nearbyint(t);
        float out = (clampf(q, lo, hi) - z) * sc;  // clamp(q) - z is an exact small integer
        y[base + i] = xi != xi ? std::bit_cast<float>(kCanonicalNan) : out;
      }
    }
}

void fake_quantize_learnable_terms(const float* x, const float* dy, float* dx, float* ds, float* dz,
                                   LearnableView v, const float* s, const float* inv, const float* zb, float lo,
                                   float hi, float grad_factor) {
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t c = 0; c < v.channels; ++c) {
      const int64_t base = (o * v.channels + c) * v.inner;
      const float sc = s[c], ic = inv[c], z = zb[c];
      const float below_factor = lo - z, above_factor = hi - z;
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t k = base + i;
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
    }
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
