// GPU-stream extra elementwise math over MLX ops. Same contracts as
// ops/math_extra.h; floating results are computed in float32 (as the other
// accurate functions on this stream, gpu/special.h) and rounded once to the
// tensor's dtype. erfc, lgamma, digamma, sinc, hypot, logaddexp2, xlogy,
// copysign, fmax / fmin and nextafter are composed here from MLX primitives
// (MLX has no kernel of those names); docs/numerics.md gives each formula.
#pragma once
#include "core/tensor.h"
#include "cpu/math_extra.h"

namespace lucid::gpu {

Tensor math_unary(cpu::MathUnaryOp op, const Tensor& x);                    // x floating
Tensor math_predicate(cpu::MathPredicate op, const Tensor& x);              // bool result
Tensor math_binary(cpu::MathBinaryOp op, const Tensor& a, const Tensor& b);  // both of one floating dtype

}  // namespace lucid::gpu
