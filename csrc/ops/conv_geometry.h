// Convolution geometry: the one validation of every float convolution's
// shapes and window arguments (conv1d/2d/3d, conv_transpose1d/2d/3d), so the
// Python wrappers only parse argument types and reshape. The kernels behind
// them (ops::conv2d, ops::conv2d_backward) still guard their own 4-D inputs.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace lucid::ops {

struct ConvGeometry {
  bool unbatched = false;               // input had no batch axis (rank nd + 1)
  std::vector<int64_t> pad_low, pad_high;  // per spatial axis, of the input the kernel slides over
  std::vector<int64_t> out_sizes;       // per spatial axis
  int64_t out_channels = 0;
};

// The checked geometry of a float convolution (1-, 2- or 3-d, direct or
// transposed): padding, output sizes and channels.
// x (N, C, *spatial) or (C, *spatial) with nd spatial axes; weight
// (O, C/groups, *kernel), or (C, O/groups, *kernel) when `transposed`; bias
// (O,) or none. stride, dilation: nd positive ints; output_padding: nd
// non-negative ints (transposed only, PyTorch's rule: each below the stride
// or the dilation). padding: nd non-negative ints, or (not transposed)
// "valid" / "same" (stride 1 only; "same" puts the odd element on the high
// side, as PyTorch). For a transposed conv pad_low / pad_high are those of
// the equivalent direct conv over the stride-dilated input.
// `fn` names the caller in every message.
ConvGeometry conv_geometry(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias, int64_t nd,
                           bool transposed, const std::vector<int64_t>& stride,
                           const std::optional<std::vector<int64_t>>& padding, const std::string& padding_mode,
                           const std::vector<int64_t>& output_padding, const std::vector<int64_t>& dilation,
                           int64_t groups, const std::string& fn);

}  // namespace lucid::ops
