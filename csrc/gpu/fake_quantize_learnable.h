// GPU-stream kernels of fake_quantize_learnable: one correctly rounded MLX op
// per step of docs/numerics.md, so values equal the CPU stream's bit for bit.
#pragma once
#include <tuple>

#include "core/tensor.h"

namespace lucid::gpu {

// x (float32) viewed as x_view = (outer, C, inner); s, inv, zf: float32 GPU
// tensors of C values (broadcast along p_view = (1, C, 1)).
Tensor fake_quantize_learnable(const Tensor& x, const Tensor& s, const Tensor& inv, const Tensor& zf,
                               const Shape& x_view, const Shape& p_view, float lo, float hi);

// (dx, ds_terms, dz_terms), each shaped like x; the ops layer sums the terms.
std::tuple<Tensor, Tensor, Tensor> fake_quantize_learnable_terms(const Tensor& x, const Tensor& dy, const Tensor& s,
                                                                  const Tensor& inv, const Tensor& zb,
                                                                  const Shape& x_view, const Shape& p_view,
                                                                  float lo, float hi, float grad_factor);

}  // namespace lucid::gpu
