// GPU stream of int4_weight_only_linear (ops/int4_linear.h).
#pragma once
#include "core/tensor.h"

namespace lucid::gpu {

// Dequantizes the packed weights exactly as dequantize does (w = fl(float(q - z)
// * s), one MLX op per step) and multiplies with MLX's float matmul. scale:
// (N, K/G) float32, zp: (N, K/G) int32, bias: (N,) float32 or undefined.
Tensor int4_weight_only_linear(const Tensor& x, const Tensor& w_packed, const Tensor& scale, const Tensor& zp,
                               int64_t group_size, bool is_signed, const Tensor& bias, const Shape& out_shape);

// act_dtype "qint8" (docs/numerics.md): each row of x quantized to int8 with
// its own scale, the group dots exact (MLX float matmul on integer values in
// blocks whose partial sums stay below 2^24), then the float steps one op at
// a time with the groups added left to right: the CPU stream's bits.
Tensor int4_weight_only_linear_qd8(const Tensor& x, const Tensor& w_packed, const Tensor& scale, const Tensor& zp,
                                   int64_t group_size, bool is_signed, const Tensor& bias, const Shape& out_shape);

}  // namespace lucid::gpu
