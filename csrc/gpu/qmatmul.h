// GPU stream of the qmatmul family (ops/qmatmul.h): the exact int32 product
// in float32 blocks, then the epilogue, one correctly rounded MLX op at a time.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid::gpu {

// x: (..., K) uint8/int8; w: (N, K) int8; zw: (N,) int32; bias: (N,) int32 or
// undefined. Returns int32 (..., N).
Tensor qmatmul_accumulate(const Tensor& x, int32_t zx, const Tensor& w, const Tensor& zw, const Tensor& bias);
Tensor qmatmul_to_float(const Tensor& acc, const Tensor& scale);
Tensor qmatmul_requantize(const Tensor& acc, const Tensor& mult, int32_t zy, float lo, float hi, DType out);

}  // namespace lucid::gpu
