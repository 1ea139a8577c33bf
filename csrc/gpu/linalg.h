// GPU-stream matrix products (MLX). Operands arrive (batch..., m, k) and
// (batch..., k, n) in one dtype; batch dims broadcast.
#pragma once
#include "core/tensor.h"

namespace lucid::gpu {

// Floats: mx::matmul in float32 (halves widened, result rounded once).
// Integers: exact, int64 products summed over k, wrapped to the dtype
// (MLX's matmul is float-only).
Tensor matmul(const Tensor& a, const Tensor& b);

}  // namespace lucid::gpu
