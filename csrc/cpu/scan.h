// CPU-stream inclusive scans along one axis: cumsum, cumprod.
#pragma once
#include "core/tensor.h"

namespace lucid::cpu {

// out[..., i, ...] = x[..., 0, ...] (op) ... (op) x[..., i, ...] along `axis`,
// accumulated left to right in the compute type (float for float16/bfloat16,
// which round each output once). x is contiguous with out's shape and dtype.
void cumsum(const Tensor& x, int axis, const Tensor& out);
void cumprod(const Tensor& x, int axis, const Tensor& out);

}  // namespace lucid::cpu
