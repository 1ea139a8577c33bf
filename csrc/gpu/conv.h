// GPU-stream 2-D convolution through MLX. MLX convolves channels-last
// (NHWC input, OHWI weight); these functions take and return NCHW / OIHW
// and transpose at the boundary.
#pragma once
#include <tuple>

#include "core/tensor.h"
#include "core/window2d.h"

namespace lucid::gpu {

// y[N,O,oh,ow] = conv(x[N,C,H,W], w[O,C/groups,kh,kw]) + b[O]; b may be undefined.
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const Window2d& win, int64_t groups);

// (dL/dx, dL/dw, dL/db) given g = dL/dy; a gradient not wanted comes back undefined.
std::tuple<Tensor, Tensor, Tensor> conv2d_backward(const Tensor& g, const Tensor& x, const Tensor& w,
                                                   const Window2d& win, int64_t groups, bool want_x,
                                                   bool want_w, bool want_b);

}  // namespace lucid::gpu
