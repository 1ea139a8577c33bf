// GPU-stream 2-D pooling through MLX, NCHW in and out. Each window tap
// (i, j) is one strided slice of the padded input; the taps are then
// reduced (max / sum), so MLX's own autodiff covers the average's backward.
#pragma once
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "core/window2d.h"

namespace lucid::gpu {

// (values, int64 flat h*W + w indices of the maxima within each plane).
std::pair<Tensor, Tensor> max_pool2d(const Tensor& x, const Window2d& win);
// Scatter-adds g onto the positions `idx` names, in a zero tensor of x_shape.
Tensor max_pool2d_backward(const Tensor& g, const Tensor& idx, const Shape& x_shape);
// Window maximum of uint8 / int8 codes, in x's dtype.
Tensor qmax_pool2d(const Tensor& x, const Window2d& win);

Tensor avg_pool2d(const Tensor& x, const Window2d& win, const std::vector<float>& divisor);
Tensor avg_pool2d_backward(const Tensor& g, const Tensor& x, const Window2d& win, const std::vector<float>& divisor);

// Adaptive average pooling is separable: y = A @ x @ B^T with A [oh, H] and
// B [ow, W] holding each bin's averaging weights.
Tensor adaptive_avg_pool2d(const Tensor& x, int64_t oh, int64_t ow);
Tensor adaptive_avg_pool2d_backward(const Tensor& g, const Tensor& x);

}  // namespace lucid::gpu
