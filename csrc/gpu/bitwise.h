// GPU-stream bitwise ops over MLX's integer kernels (contracts: ops/bitwise.h;
// out-of-range shift counts are mapped explicitly, so the bits match the CPU
// stream's).
#pragma once
#include "core/tensor.h"
#include "core/bitwise_kind.h"

namespace lucid::gpu {

Tensor bitwise_binary(BitwiseOp op, const Tensor& a, const Tensor& b);  // one integer / bool dtype
Tensor bitwise_not(const Tensor& x);

}  // namespace lucid::gpu
