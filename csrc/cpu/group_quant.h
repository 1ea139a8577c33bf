// CPU stream of the group-wise affine format (ops/group_quant.h): the layout
// MLX's quantize / quantized_matmul use, bits 2-6 or 8 packed into 32-bit
// words; and the MX / NVFP4 block formats (core/minifloat.h's functions). Plain loops over raw buffers; ops/ has validated every argument.
#pragma once
#include <cstdint>

#include "core/minifloat.h"
#include "core/tensor.h"

namespace lucid::cpu {

// w: rows x K float32 (contiguous); per group of `group_size` along K one
// scale and one bias; codes in [0, 2^bits - 1], element k of a word at bit
// k * bits. words: rows x K * bits / 32; scales, biases: rows x K / group_size.
// Returns false when some element of w is not finite (the outputs are then unspecified).
bool group_quantize(const float* w, int64_t rows, int64_t K, int group_size, int bits, uint32_t* words,
                    float* scales, float* biases);

// The block formats: words rows x K * bits / 32, scales (uint8 codes) rows x K / group.
void block_quantize(const float* w, int64_t rows, int64_t K, minifloat::BlockMode mode, uint32_t* words,
                    uint8_t* scales);
void block_dequantize(const uint32_t* words, const uint8_t* scales, int64_t rows, int64_t K,
                      minifloat::BlockMode mode, float* w);

// w = fl(fl(float(q) * scale) + bias) for every element (rows x K).
void group_dequantize(const uint32_t* words, const float* scales, const float* biases, int64_t rows, int64_t K,
                      int group_size, int bits, float* w);

// out (M x N) = x (M x K) @ W.T (+ bias), W the dequantized weights (N x K),
// taken a block of rows at a time so the float copy stays in cache.
void group_quantized_linear(const float* x, int64_t M, int64_t K, const uint32_t* words, const float* scales,
                            const float* biases, int64_t N, int group_size, int bits, const float* bias, float* out);

}  // namespace lucid::cpu
