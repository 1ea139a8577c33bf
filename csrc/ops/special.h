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

Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor atan2(const Tensor& y, const Tensor& x);

}  // namespace lucid::ops
