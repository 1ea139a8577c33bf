// 2-D convolution (conv1d is conv2d over a unit height, in Python):
// validation, output size, dtype handling, then cpu:: or gpu::.
#pragma once
#include <optional>
#include <tuple>
#include <vector>

#include "core/tensor.h"

namespace lucid::ops {

// 2-D cross-correlation of x with weight, plus bias.
// x [N, C, H, W], weight [O, C/groups, kh, kw], bias [O] or none.
// padding = (top, bottom, left, right); stride, dilation = (h, w).
// `fn` names the caller in error messages ("conv2d", "conv1d").
Tensor conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
              const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
              const std::vector<int64_t>& dilation, int64_t groups, const std::string& fn = "conv2d");

// (dL/dx, dL/dweight, dL/dbias) given grad = dL/dy; a gradient is returned
// only where `want` (x, weight, bias) asks for it.
std::tuple<std::optional<Tensor>, std::optional<Tensor>, std::optional<Tensor>> conv2d_backward(
    const Tensor& grad, const Tensor& x, const Tensor& weight, const std::vector<int64_t>& stride,
    const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups,
    const std::vector<bool>& want);

}  // namespace lucid::ops
