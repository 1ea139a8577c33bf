// The qmatmul family: the integer matrix product of int8 / uint8 codes with
// its requantization epilogue (docs/numerics.md, "Integer matrix product and
// requantization"), and its prepacked weights.
#pragma once
#include <memory>
#include <string>

#include "core/tensor.h"

namespace lucid::cpu {
struct QWeightCache;  // cpu/qmatmul.h
}

namespace lucid::ops {

// A qmatmul weight prepared once for repeated calls (as a quantized Linear
// would): a private copy of the int8 codes (N, K), so later writes to the
// caller's tensor change neither stream, and on the CPU stream the packed
// panels of each GEMM engine used, built on first use.
struct QPackedWeight {
  Tensor wq;
  std::shared_ptr<cpu::QWeightCache> cache;  // null for GPU tensors
};
// Checks wq (N, K) int8 and makes its QPackedWeight: of a private copy of wq, or,
// with copy = false, of wq itself where it is contiguous (for an owner that
// repacks whenever wq's version changes: the quantized layers' pack cache).
QPackedWeight qmatmul_prepack(const Tensor& wq, bool copy = true);

// Integer matmul xq (..., K) by wq (N, K)^T; float32 output when out_scale is
// undefined, otherwise codes of `out_qdtype`. `packed` (optional) supplies
// wq's cached panels.
Tensor qmatmul(const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq, const Tensor& w_scale,
               const Tensor& w_zp, const Tensor& bias, const Tensor& out_scale, const Tensor& out_zp,
               const std::string& out_qdtype, cpu::QWeightCache* packed = nullptr);

}  // namespace lucid::ops
