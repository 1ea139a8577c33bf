// Linear layer y = x @ weight^T + bias over the last axis of x, and its
// gradients; validation, then cpu:: (SGEMM) or gpu:: (MLX matmul).
#pragma once
#include <optional>
#include <tuple>
#include <vector>

#include "core/tensor.h"

namespace lucid::ops {

// y = x @ weight^T + bias over the last axis of x:
// x [..., in_features], weight [out_features, in_features], bias [out_features] or none.
Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias);
// linear's gradients (dL/dx, dL/dweight, dL/dbias) where `want` (x, weight, bias) asks.
std::tuple<std::optional<Tensor>, std::optional<Tensor>, std::optional<Tensor>> linear_backward(
    const Tensor& grad, const Tensor& x, const Tensor& weight, const std::vector<bool>& want);

}  // namespace lucid::ops
