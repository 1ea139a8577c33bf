// Matrix products: shape and dtype validation, then cpu:: or gpu::.
#pragma once
#include "core/tensor.h"

namespace lucid::ops {

// numpy's matmul: 1-D operands are promoted to a matrix (a row for `input`,
// a column for `other`) and the added axis is removed from the result;
// batch axes broadcast. Dtypes promote as in add; float16/bfloat16 compute
// in float32 and round once; integers are exact (int64 accumulation, then
// wrapped to the result dtype). Errors: ValueError for 0-d operands or
// mismatched inner dimensions (naming both shapes), TypeError for bool,
// ValueError for tensors on different devices.
Tensor matmul(const Tensor& a, const Tensor& b);
// 2-D @ 2-D only.
Tensor mm(const Tensor& a, const Tensor& b);
// 3-D @ 3-D with equal batch sizes only.
Tensor bmm(const Tensor& a, const Tensor& b);

}  // namespace lucid::ops
