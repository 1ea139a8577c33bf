// CPU-stream 2-D convolution: im2col + SGEMM, with the backward kernels
// (grad_input through col2im, grad_weight through GEMM). Contiguous NCHW
// tensors of one dtype, float32 (SGEMM) or float64 (DGEMM); ops/conv.cpp
// validates shapes and converts other dtypes to float32 first.
#pragma once
#include "core/tensor.h"
#include "core/window2d.h"

namespace lucid::cpu {

// y[N,O,oh,ow] = conv(x[N,C,H,W], w[O,C/groups,kh,kw]) + b[O]; b may be undefined.
void conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y, const Window2d& win,
            int64_t groups);

// Gradients of conv2d given g = dL/dy. Any of gx, gw, gb may be undefined
// (not wanted); those given are overwritten.
void conv2d_backward(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& gx, const Tensor& gw,
                     const Tensor& gb, const Window2d& win, int64_t groups);

}  // namespace lucid::cpu
