// The group-wise affine weight format of MLX (mlx.core.quantize /
// quantized_matmul, "affine" mode): along the last axis, each group of
// group_size weights has a float scale and bias, w ~ q * scale + bias with
// codes q in [0, 2^bits - 1] packed little-end first into 32-bit words (held
// as int32 tensors: lucid has no uint32). docs/numerics.md, "Group-wise
// affine (MLX layout)", is the contract: the codes, scales and biases are
// bit-identical on both streams and equal mlx.core.quantize's on MLX's CPU
// device.
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"

namespace lucid::ops {

// MLX's group-wise affine quantization of a weight matrix:
// w: (N, K) float32, finite; group_size 32, 64 or 128 dividing K; bits 2-6 or 8.
// {words (N, K * bits / 32) int32, scales (N, K / group_size), biases (same)}.
std::vector<Tensor> group_quantize(const Tensor& w, int64_t group_size, int64_t bits);

// The float weights (N, K) the format holds: fl(fl(float(q) * scale) + bias).
Tensor group_dequantize(const Tensor& words, const Tensor& scales, const Tensor& biases, int64_t group_size,
                        int64_t bits);

// The OCP MX / NVFP4 block formats in MLX's layout (mlx.core.quantize with
// mode "mxfp8", "mxfp4", "nvfp4"): w (N, K) float32, K a multiple of 32 ->
// {words (N, K * bits / 32) int32, scales (N, K / group) uint8 codes}.
std::vector<Tensor> block_quantize(const Tensor& w, const std::string& mode);
// The (N, K) float32 values: decode(code) * scale.
Tensor block_dequantize(const Tensor& words, const Tensor& scales, const std::string& mode);

// x (..., K) float32 @ W.T (+ bias (N,)) -> (..., N). Float output: the streams
// agree within float32 summation tolerance (MLX's quantized_matmul on the GPU
// stream, dequantized blocks and sgemm on the CPU stream), not bit for bit.
Tensor group_quantized_linear(const Tensor& x, const Tensor& words, const Tensor& scales, const Tensor& biases,
                              int64_t group_size, int64_t bits, const Tensor& bias);

}  // namespace lucid::ops
