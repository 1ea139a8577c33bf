// GPU stream of the group-wise affine format (ops/group_quant.h).
#pragma once
#include <vector>

#include "core/minifloat.h"
#include "core/tensor.h"

namespace lucid::gpu {

// w: (N, K) float32. Returns {words (N, K * bits / 32) int32 holding the uint32
// bit patterns, scales (N, K / G) float32, biases (N, K / G) float32}: the CPU
// stream's bits (numerics.md), composed from MLX ops one float step at a time.
std::vector<Tensor> group_quantize(const Tensor& w, int group_size, int bits);

// fl(fl(float(q) * scale) + bias), (N, K) float32.
Tensor group_dequantize(const Tensor& words, const Tensor& scales, const Tensor& biases, int group_size, int bits);

// x (..., K) float32 @ W.T (+ bias) through mlx::core::quantized_matmul on the
// packed words; out_shape (..., N).
Tensor group_quantized_linear(const Tensor& x, const Tensor& words, const Tensor& scales, const Tensor& biases,
                              int group_size, int bits, const Tensor& bias, const Shape& out_shape);

// The block formats (core/minifloat.h): {words int32 (N, K * bits / 32), scales uint8 (N, K / group)}.
std::vector<Tensor> block_quantize(const Tensor& w, minifloat::BlockMode mode);
Tensor block_dequantize(const Tensor& words, const Tensor& scales, minifloat::BlockMode mode);

}  // namespace lucid::gpu
