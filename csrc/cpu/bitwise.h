// CPU-stream bitwise ops on integer and bool tensors (exact; the GPU stream
// gives the same bits). Shifts follow PyTorch for a shift count outside
// [0, bits of the dtype): left gives 0, right gives -1 for a negative value
// and 0 otherwise (a full arithmetic shift).
#pragma once
#include "core/bitwise_kind.h"
#include "core/tensor.h"

namespace lucid::cpu {

// out = op(a, b); a and b contiguous, of out's (integer or bool) dtype and shape.
void bitwise_binary(BitwiseOp op, const Tensor& a, const Tensor& b, const Tensor& out);
// out = ~x (integers) or !x (bool); x contiguous, of out's dtype.
void bitwise_not(const Tensor& x, const Tensor& out);

}  // namespace lucid::cpu
