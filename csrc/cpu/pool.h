// CPU-stream 2-D pooling kernels over contiguous NCHW tensors, float32 or
// float64 (the input's dtype; quantized codes for qmax); one
// (sample, channel) plane per task. ops/pool.cpp validates and sizes outputs.
#pragma once
#include <vector>

#include "core/tensor.h"
#include "core/window2d.h"

namespace lucid::cpu {

// y = window maximum; idx (int64) = flat h*W + w position of that maximum in
// its input plane (the first one in scan order on ties; NaN wins).
void max_pool2d(const Tensor& x, const Tensor& y, const Tensor& idx, const Window2d& win);
// y = window maximum of uint8 / int8 codes (x's dtype); windows never lie wholly in padding.
void qmax_pool2d(const Tensor& x, const Tensor& y, const Window2d& win);
// gx = 0, then gx[plane][idx] += g for every output; indices outside the plane are skipped.
void max_pool2d_backward(const Tensor& g, const Tensor& idx, const Tensor& gx);

// y = sum over the window (clipped to the input) / divisor[oh*ow] (computed by ops).
void avg_pool2d(const Tensor& x, const Tensor& y, const Window2d& win, const std::vector<float>& divisor);
void avg_pool2d_backward(const Tensor& g, const Tensor& gx, const Window2d& win, const std::vector<float>& divisor);

// y[.., i, j] = mean of the adaptive bin (i, j) of x.
void adaptive_avg_pool2d(const Tensor& x, const Tensor& y);
void adaptive_avg_pool2d_backward(const Tensor& g, const Tensor& gx);

}  // namespace lucid::cpu
