// fake_quantize_learnable: PyTorch's LSQ / LSQ+ learnable fake quantization
// (docs/numerics.md). The one place that validates its arguments for both
// streams. scale and zero_point are float tensors of one value (per-tensor,
// ch_axis empty) or x.shape[ch_axis] values (per-channel).
#pragma once
#include <optional>
#include <tuple>

#include "core/tensor.h"

namespace lucid::ops {

// LSQ / LSQ+ fake quantization of x with learnable scale and zero_point.
Tensor fake_quantize_learnable(const Tensor& x, const Tensor& scale, const Tensor& zero_point, int64_t quant_min,
                               int64_t quant_max, std::optional<int64_t> ch_axis);

// fake_quantize_learnable's gradients (dx, dscale, dzero_point): dx shaped like x, the other two like scale /
// zero_point, all float32 on x's device.
std::tuple<Tensor, Tensor, Tensor> fake_quantize_learnable_backward(const Tensor& dy, const Tensor& x,
                                                                     const Tensor& scale, const Tensor& zero_point,
                                                                     int64_t quant_min, int64_t quant_max,
                                                                     std::optional<int64_t> ch_axis,
                                                                     double grad_factor);

}  // namespace lucid::ops
