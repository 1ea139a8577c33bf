// GPU-stream kernels of the math family over MLX ops. Same contracts as
// ops/math.h; floating results are computed in float32 (as the other
// accurate functions on this stream, gpu/special.h) and rounded once to the
// tensor's dtype. erfc, lgamma, digamma, sinc, hypot, logaddexp2, xlogy,
// copysign, fmax / fmin and nextafter are composed here from MLX primitives
// (MLX has no kernel of those names); docs/numerics.md gives each formula.
#pragma once
#include "core/tensor.h"
#include "core/math_kind.h"

namespace lucid::gpu {

Tensor math_unary(MathUnaryOp op, const Tensor& x);                    // x floating
Tensor math_predicate(MathPredicate op, const Tensor& x);              // bool result
Tensor math_binary(MathBinaryOp op, const Tensor& a, const Tensor& b);  // both of one floating dtype

}  // namespace lucid::gpu
