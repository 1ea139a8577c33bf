// Internal to the cpu/ quantization kernels: routes the common cases (float32
// input, 8-bit or int32 codes, narrow fake_quantize grids, int4 packing along
// the last axis) through the explicit-SIMD microkernels of cpu/kernels/.
// Each returns false when the case is not one of them, and the caller's
// compiler-vectorized loop runs instead.
#pragma once
#include "cpu/kernels/vquant.h"
#include "cpu/quantize.h"

namespace lucid::cpu {

// `k` is kernels::vquant_best() for the fast path, kernels::vquant_scalar()
// for the reference path (which then runs single-threaded).
bool quantize_simd(const Tensor& x, const Tensor& out, const QSegments& seg, const float* scale, const int32_t* zp,
                   QBounds b, const kernels::VQuantKernels& k);
bool dequantize_simd(const Tensor& q, const Tensor& out, const QSegments& seg, const float* scale, const int32_t* zp,
                     const kernels::VQuantKernels& k);
bool fake_quantize_simd(const Tensor& x, const Tensor& y, const Tensor& mask, const QSegments& seg,
                        const float* scale, const int32_t* zp, int64_t qmin, int64_t qmax,
                        const kernels::VQuantKernels& k);
bool masked_grad_simd(const Tensor& dy, const Tensor& mask, const Tensor& dx);
bool pack_int4_simd(const Tensor& codes, const Tensor& out, int64_t outer, int64_t len, int64_t inner);
bool unpack_int4_simd(const Tensor& packed, const Tensor& out, int64_t outer, int64_t len, int64_t inner);

}  // namespace lucid::cpu
