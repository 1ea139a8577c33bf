// GPU-stream kernels of the quantize family: MLX ops, each naming stream(). They
// compute the formulas of docs/numerics.md one correctly rounded MLX op at a
// time (divide, round-half-even, add, clip, where(isnan), astype), so the
// codes equal the CPU stream's bit for bit. Parameters arrive validated.
#pragma once
#include <utility>

#include "core/minifloat.h"
#include "core/tensor.h"

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
// Float grids: the integer operations of minifloat::encode / decode composed
// from MLX's uint32 ops (gpu/quantize.cpp).
Tensor quantize_minifloat(const Tensor& x, const Tensor& scale, const Shape& x_view, const Shape& p_view,
                          const minifloat::Format& f, bool saturate);
Tensor dequantize_minifloat(const Tensor& q, const Tensor& scale, const Shape& x_view, const Shape& p_view,
                            const minifloat::Format& f, DType out);
Tensor masked_grad(const Tensor& dy, const Tensor& mask);

}  // namespace lucid::gpu
