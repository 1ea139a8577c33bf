// The qconv2d family: the integer 2-D convolution (docs/numerics.md,
// "Quantized convolution"), qmatmul's product and epilogue over an integer
// im2col.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace lucid::cpu {
struct QConvWeightCache;  // cpu/qconv2d.h
}

namespace lucid::ops {

// A qconv2d weight prepared once for repeated calls (as a quantized Conv2d
// would): a private copy of the int8 codes (O, C / groups, kh, kw), so later
// writes to the caller's tensor change neither stream, and on the CPU stream the
// reordered, packed panels of each GEMM engine used, built on first use.
struct QPackedConvWeight {
  Tensor wq;
  std::shared_ptr<cpu::QConvWeightCache> cache;  // null for GPU tensors
};
// Checks wq (O, C / groups, kh, kw) int8 and makes its QPackedConvWeight: of a
// private copy of wq, or, with copy = false, of wq itself where it is contiguous
// (see qmatmul_prepack).
QPackedConvWeight qconv2d_prepack(const Tensor& wq, bool copy = true);

// Integer 2-D convolution: xq (N, C, H, W) codes padded with x_zp, wq (O, C /
// groups, kh, kw) int8, symmetric padding (ph, pw); float32 output when
// out_scale is undefined, otherwise codes of `out_qdtype`. Output (N, O, oh, ow).
// `packed` (optional) supplies wq's cached panels.
Tensor qconv2d(const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq, const Tensor& w_scale,
               const Tensor& w_zp, const Tensor& bias, const std::vector<int64_t>& stride,
               const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups,
               const Tensor& out_scale, const Tensor& out_zp, const std::string& out_qdtype,
               cpu::QConvWeightCache* packed = nullptr);

}  // namespace lucid::ops
