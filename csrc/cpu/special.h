// CPU-stream accurate elementwise functions: log1p, expm1, log2, atan2.
// Each float element is widened to double, passed to the C library's double
// function (accurate to < 1 ulp of double) and rounded once to the output
// type, so float32 results are within 0.5 ulp (+ a vanishing double error)
// of the exact value. These are scalar loops, slower than the vectorized
// exp/log of cpu/elementwise_math.h; accuracy comes first here.
#pragma once
#include "core/special_kind.h"
#include "core/tensor.h"

namespace lucid::cpu {

// out = op(x); x contiguous, floating, of out's dtype and shape.
void special_unary(SpecialOp op, const Tensor& x, const Tensor& out);
// out = atan2(y, x); y and x contiguous, floating, of out's dtype and shape.
void atan2(const Tensor& y, const Tensor& x, const Tensor& out);

}  // namespace lucid::cpu
