// CPU-stream matrix products. ops/linalg.cpp validates shapes and dtypes and
// hands over operands already shaped (batch..., m, k) and (batch..., k, n)
// with batch dims broadcast to `out`'s (strides 0 where broadcast).
#pragma once
#include "core/tensor.h"

namespace lucid::cpu {

// out (contiguous, (batch..., m, n)) = a @ b. float32 goes through BLAS sgemm
// (transposed operands are passed as such, not copied); integer dtypes are
// exact: int64 accumulation, then wrapped to out's dtype. a, b and out share
// one dtype (halves are widened by the caller).
void matmul(const Tensor& a, const Tensor& b, const Tensor& out);

}  // namespace lucid::cpu
