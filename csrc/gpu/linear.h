// GPU-stream linear layer through MLX matmul. x is [M, K] (ops flattens).
#pragma once
#include <tuple>

#include "core/tensor.h"

namespace lucid::gpu {

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);  // b may be undefined
std::tuple<Tensor, Tensor, Tensor> linear_backward(const Tensor& g, const Tensor& x, const Tensor& w, bool want_x,
                                                   bool want_w, bool want_b);

}  // namespace lucid::gpu
