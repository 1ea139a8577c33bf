// CPU-stream elementwise kernels. Inputs arrive already converted to the
// compute dtype by ops/elementwise.cpp; outputs are contiguous.
#pragma once
#include "core/elementwise_kind.h"
#include "core/tensor.h"

namespace lucid::cpu {

// out = op(x); x and out have one dtype and shape.
void unary(UnaryOp op, const Tensor& x, const Tensor& out);
// out = op(a, b); a and b share out's dtype and broadcast to out's shape.
void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out);

}  // namespace lucid::cpu
