// Bitwise ops (PyTorch's bitwise_and / or / xor / not, bitwise_left_shift /
// right_shift) on integer and bool tensors: promote_types then broadcast;
// TypeError for floating inputs, and for bool shifts. Exact on both streams
// (shift counts outside [0, bits): cpu/bitwise.h).
#pragma once
#include "core/bitwise_kind.h"
#include "core/tensor.h"

namespace lucid::ops {

// a op b, bitwise (and, or, xor, left / right shift) on integer or bool tensors.
Tensor bitwise_binary(BitwiseOp op, const char* fn, const Tensor& a, const Tensor& b);
// ~x on integer tensors, logical not on bool.
Tensor bitwise_not(const Tensor& x);

}  // namespace lucid::ops
