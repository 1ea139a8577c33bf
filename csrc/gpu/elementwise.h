// GPU-stream elementwise ops over MLX arrays.
#pragma once
#include "core/elementwise_kind.h"
#include "core/tensor.h"

namespace lucid::gpu {

Tensor unary(UnaryOp op, const Tensor& x);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, DType out_dtype);

}  // namespace lucid::gpu
