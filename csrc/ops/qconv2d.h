// The qconv2d family: the integer 2-D convolution (docs/numerics.md,
// "Quantized convolution"), qmatmul's product and epilogue over an integer
// im2col.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace lucid::ops {

// Integer 2-D convolution: xq (N, C, H, W) codes padded with x_zp, wq (O, C /
// groups, kh, kw) int8, symmetric padding (ph, pw); float32 output when
// out_scale is undefined, otherwise codes of `out_qdtype`. Output (N, O, oh, ow).
Tensor qconv2d(const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq, const Tensor& w_scale,
               const Tensor& w_zp, const Tensor& bias, const std::vector<int64_t>& stride,
               const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups,
               const Tensor& out_scale, const Tensor& out_zp, const std::string& out_qdtype);

}  // namespace lucid::ops
