// CPU-stream kernels of fake_quantize_learnable (LSQ / LSQ+), formulas in
// docs/numerics.md. x is viewed as (outer, C, inner); every parameter array
// holds one float32 per channel (C = 1 per-tensor), prepared by
// ops/fake_quantize_learnable.cpp.
#pragma once
#include <cstdint>

namespace lucid::cpu {

struct LearnableView {
  int64_t outer = 1, channels = 1, inner = 1;
};

// y = fl(float(clamp(fl(zf + rint(fl(x * inv)))) - zf) * s); NaN -> canonical NaN.
void fake_quantize_learnable(const float* x, float* y, LearnableView v, const float* s, const float* inv,
                             const float* zf, float lo, float hi);

// The per-element gradient terms: dx, and ds_i / dz_i (any of ds, dz may be
// null when the caller sums on the fly with sum_per_channel instead).
void fake_quantize_learnable_terms(const float* x, const float* dy, float* dx, float* ds, float* dz,
                                   LearnableView v, const float* s, const float* inv, const float* zb, float lo,
                                   float hi, float grad_factor);

// out[c] = float(Σ terms of channel c), accumulated in double in row-major
// element order: the one summation both streams use.
void sum_per_channel(const float* terms, LearnableView v, float* out);

}  // namespace lucid::cpu
