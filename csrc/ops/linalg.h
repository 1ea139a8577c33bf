// Matrix products: shape and dtype validation, then cpu:: or gpu::.
#pragma once
#include "core/tensor.h"

namespace lucid::ops {

// The matrix product, numpy's matmul: 1-D operands are promoted to a matrix
// (a row for `input`, a column for `other`) and the added axis is removed
// from the result; batch axes broadcast. Dtypes promote as in add; float16/bfloat16 compute
// in float32 and round once; integers are exact (int64 accumulation, then
// wrapped to the result dtype). Errors: ValueError for 0-d operands or
// mismatched inner dimensions (naming both shapes), TypeError for bool,
// ValueError for tensors on different devices.
Tensor matmul(const Tensor& a, const Tensor& b);
// The matrix product of two 2-D tensors.
Tensor mm(const Tensor& a, const Tensor& b);
// The batched matrix product of two 3-D tensors with equal batch sizes.
Tensor bmm(const Tensor& a, const Tensor& b);

}  // namespace lucid::ops
