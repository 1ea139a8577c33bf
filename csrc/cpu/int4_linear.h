// CPU stream of int4_weight_only_linear (ops/int4_linear.h): float32
// activations times packed int4 weights with per-group scales, through the
// qb4w GEMV microkernels of cpu/kernels/ (weights stay packed) for up to 15
// activation rows; from 16 rows on, dequantized once and multiplied by sgemm.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid::cpu {

// x: (M, K) float32 contiguous; w: (N, K/2) uint8 (pack_int4 along K);
// scale, zq: N x K/G (zq = z + 8 for qint4 codes, with flip = 0x88; z and
// flip = 0 for quint4; null: every zq is 8, qint4 without zero points);
// bias: N floats or null; out: (M, N) float32.
// `reference` runs the scalar kernel single-threaded.
void int4_weight_only_linear(const Tensor& x, const Tensor& w, const float* scale, const int32_t* zq, uint8_t flip,
                             int64_t group_size, const float* bias, const Tensor& out, bool reference);

// The same product with activations quantized per row to int8 (act_dtype
// "qint8", docs/numerics.md): each row's codes are laid out once, then the
// qd8-qb4w GEMV kernels run over chunks of output columns (all rows per
// chunk, so a chunk's weights are read from memory once). zq may be null for
// qint4 without zero points. Rows holding NaN / inf give the canonical NaN.
// The scales are checked here, chunk by chunk just before the kernel reads
// them (a separate pass re-read them from memory: a tenth of the M = 1 time):
// returns -1, or the first flat index of a scale that is not finite and > 0,
// and then `out` holds no result (ops/ raises).
int64_t int4_weight_only_linear_qd8(const Tensor& x, const Tensor& w, const float* scale, const int32_t* zq,
                                    uint8_t flip, int64_t group_size, const float* bias, const Tensor& out,
                                    bool reference);

// The first index i < n with scale[i] not finite and > 0, or -1.
int64_t first_bad_scale(const float* scale, int64_t n);

}  // namespace lucid::cpu
