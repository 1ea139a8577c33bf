// CPU stream of the float-coded weight-only linears (ops/weight_gemv.h):
// float32 activations times FP8 codes with row scales, or MLX's block
// formats (mxfp8, mxfp4, nvfp4) or group-wise affine words at 4 and 8 bits
// (ops/group_quant.h), through the qfw GEMV microkernels of
// cpu/kernels/ (the codes are read in place, never dequantized to memory).
// This is the decoding case: ops/ sends at most kWeightGemvRows activation
// rows here (or any number for the reference kernel); more rows go to
// dequantize + sgemm, which is compute-bound and wins there.
#pragma once
#include <cstdint>

#include "cpu/kernels/qfw-gemv.h"

namespace lucid::cpu {

constexpr int64_t kWeightGemvRows = 8;

// x: M x K float32 rows (contiguous); w: N rows of codes
// (kernels::qfw_row_bytes(f, K) bytes each); s: row scales (s_stride 1, or
// 0 for one per-tensor scale) for the fp8 formats, the N x K / G float group
// scales for affine (s_stride K / G; gb the group biases, alike); sc: N x K /
// group scale codes for the block formats; G: the affine group size; bias: N
// floats or null; y: M x N float32. Threaded over the N rows; `reference`
// runs the scalar kernel on one thread.
void qfw_linear(kernels::QfwFormat f, const float* x, int64_t M, int64_t K, const uint8_t* w, int64_t N,
                const float* s, int64_t s_stride, const uint8_t* sc, int64_t G, const float* gb, const float* bias,
                float* y, bool reference);

}  // namespace lucid::cpu
