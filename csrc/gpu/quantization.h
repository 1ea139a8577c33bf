// GPU-stream quantization kernels: MLX ops, each naming stream(). They
// compute the formulas of docs/numerics.md one correctly rounded MLX op at a
// time (divide, round-half-even, add, clip, where(isnan), astype), so the
// codes equal the CPU stream's bit for bit. Parameters arrive validated.
#pragma once
#include <utility>

#include "core/tensor.h"
#include "core/window2d.h"

namespace lucid::gpu {

// x is reshaped to x_view and the parameters (scale float32, zp int32, one
// value per parameter slot) to p_view, which broadcasts against x_view.
Tensor quantize(const Tensor& x, const Tensor& scale, const Tensor& zp, const Shape& x_view, const Shape& p_view,
                float lo, float hi, DType storage);
Tensor dequantize(const Tensor& q, const Tensor& scale, const Tensor& zp, const Shape& x_view, const Shape& p_view,
                  DType out);
// Returns (y, mask). `wide` selects int64 for q - z (grids wider than int32 differences).
std::pair<Tensor, Tensor> fake_quantize(const Tensor& x, const Tensor& scale, const Tensor& zp, const Shape& x_view,
                                        const Shape& p_view, float lo, float hi, bool wide);
Tensor masked_grad(const Tensor& dy, const Tensor& mask);

Tensor pack_int4(const Tensor& codes, int64_t outer, int64_t len, int64_t inner, const Shape& out_shape);
Tensor unpack_int4(const Tensor& packed, int64_t outer, int64_t len, int64_t inner, DType out,
                   const Shape& out_shape);

// x: (..., K) uint8/int8; w: (N, K) int8; zw: (N,) int32; bias: (N,) int32 or
// undefined. Returns int32 (..., N).
Tensor qmatmul_accumulate(const Tensor& x, int32_t zx, const Tensor& w, const Tensor& zw, const Tensor& bias);
Tensor qmatmul_to_float(const Tensor& acc, const Tensor& scale);
Tensor qmatmul_requantize(const Tensor& acc, const Tensor& mult, int32_t zy, float lo, float hi, DType out);

// Quantized conv2d as the CPU stream defines it: im2col of x (N, C, H, W)
// padded with zx, then the exact blocked product of qmatmul_accumulate and
// its epilogue (float32 with scale = sxw, or codes with scale = M[n]).
Tensor qconv2d(const Tensor& x, int32_t zx, const Tensor& w, const Tensor& zw, const Tensor& bias, const Tensor& scale,
               bool quantized_out, int32_t zy, float lo, float hi, DType out, const Window2d& win, int64_t groups);

}  // namespace lucid::gpu
