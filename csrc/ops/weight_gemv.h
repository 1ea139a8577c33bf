// Weight-only linears over float-coded weights: y = x @ W.T + bias with W
// held as FP8 codes and a float scale, or in MLX's block formats (mxfp8,
// mxfp4, nvfp4). W's values are those of dequantize / dequantize_mx; the
// output is float and agrees across streams within float32 summation
// tolerance (docs/numerics.md, "Float-coded weight-only linear"). The CPU
// stream reads the codes in place for up to cpu::kWeightGemvRows activation
// rows (the decoding case); more rows, and the GPU stream, dequantize the
// weights and run the float linear.
#pragma once
#include <string>

#include "core/tensor.h"

namespace lucid::ops {

// x: (..., K) float32; codes: (N, K) uint8 bit patterns of qdtype
// ("float8_e4m3fn" or "float8_e5m2"); scale: float, finite and > 0, one
// value (0-d or (1,)) or one per output row (N,); bias: undefined or (N,)
// float. W[n, k] = decode(codes[n, k]) * scale[n]. `reference` runs the
// scalar CPU kernel, for any number of rows (CPU stream only).
Tensor float8_weight_linear(const Tensor& x, const Tensor& codes, const Tensor& scale, const std::string& qdtype,
                            const Tensor& bias, bool reference = false);

// x: (..., K) float32; words: (N, K * bits / 32) int32 (MLX's uint32 words;
// bits 8 for mxfp8, 4 for mxfp4 / nvfp4), K a positive multiple of 32;
// scales: (N, K / group) uint8 scale codes; mode "mxfp8", "mxfp4", "nvfp4";
// bias: undefined or (N,) float. W = dequantize_mx(words, scales, mode).
Tensor block_weight_linear(const Tensor& x, const Tensor& words, const Tensor& scales, const std::string& mode,
                           const Tensor& bias, bool reference = false);

}  // namespace lucid::ops
