// Accurate elementwise functions: log1p(x) = ln(1 + x), expm1(x) = e^x - 1,
// log2(x), atan2(y, x) (the angle of the point (x, y), in [-pi, pi]).
// Integer and bool inputs promote to float32; atan2 promotes its two inputs
// with promote_types and broadcasts them. Mixed devices raise TypeError.
// Accuracy (docs/numerics.md, "Accurate elementwise functions"): the CPU
// stream rounds a double-precision result once; the GPU stream uses MLX's
// kernels; neither is bit-identical to the other.
#pragma once
#include "core/tensor.h"

namespace lucid::ops {

// ln(1 + x), accurate near 0.
Tensor log1p(const Tensor& x);
// e^x - 1, accurate near 0.
Tensor expm1(const Tensor& x);
// The base-2 logarithm.
Tensor log2(const Tensor& x);
// The angle of the point (x, y), in [-pi, pi]; y and x broadcast.
Tensor atan2(const Tensor& y, const Tensor& x);

}  // namespace lucid::ops
