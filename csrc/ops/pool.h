// 2-D pooling: validation, output sizes (PyTorch's floor / ceil_mode rule),
// the average's divisor, then cpu:: or gpu::. Inputs are 4-D (N, C, H, W);
// Python adds the batch axis for 3-D inputs.
#pragma once
#include <tuple>
#include <vector>

#include "core/tensor.h"

namespace lucid::ops {

// 2-D max pooling:
// (values, int64 indices: flat h*W + w of each maximum within its plane).
std::tuple<Tensor, Tensor> max_pool2d(const Tensor& x, const std::vector<int64_t>& kernel,
                                      const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                                      const std::vector<int64_t>& dilation, bool ceil_mode);
// max_pool2d's input gradient: grad summed into the positions of `indices`.
Tensor max_pool2d_backward(const Tensor& grad, const Tensor& indices, const Tensor& x);

// Max pooling of quantized codes (uint8 or int8, any values): the window maximum
// in the input's dtype, no indices. Exact for quantized activations because the
// dequantization is monotone, so the maximum code is the code of the maximum.
Tensor qmax_pool2d(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                   const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, bool ceil_mode);

// 2-D average pooling;
// divisor_override <= 0 means none.
Tensor avg_pool2d(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& padding, bool ceil_mode, bool count_include_pad,
                  int64_t divisor_override);
// avg_pool2d's input gradient.
Tensor avg_pool2d_backward(const Tensor& grad, const Tensor& x, const std::vector<int64_t>& kernel,
                           const std::vector<int64_t>& stride, const std::vector<int64_t>& padding, bool ceil_mode,
                           bool count_include_pad, int64_t divisor_override);

// Average pooling to `output_size` (PyTorch's adaptive windows).
Tensor adaptive_avg_pool2d(const Tensor& x, const std::vector<int64_t>& output_size);
// adaptive_avg_pool2d's input gradient.
Tensor adaptive_avg_pool2d_backward(const Tensor& grad, const Tensor& x);

}  // namespace lucid::ops
