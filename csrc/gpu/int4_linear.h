// GPU stream of int4_weight_only_linear (ops/int4_linear.h).
#pragma once
#include "core/tensor.h"

namespace lucid::gpu {

// Dequantizes the packed weights exactly as dequantize does (w = fl(float(q - z)
// * s), one MLX op per step) and multiplies with MLX's float matmul. scale:
// (N, K/G) float32, zp: (N, K/G) int32, bias: (N,) float32 or undefined.
Tensor int4_weight_only_linear(const Tensor& x, const Tensor& w_packed, const Tensor& scale, const Tensor& zp,
                               int64_t group_size, bool is_signed, const Tensor& bias, const Shape& out_shape);

}  // namespace lucid::gpu
