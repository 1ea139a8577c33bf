// Names of the bitwise ops, shared by both streams' kernels (like
// elementwise_kind.h) so each is spelled the same in cpu/, gpu/ and ops/.
#pragma once

namespace lucid {

// out = op(a, b) on integer or bool tensors of one dtype. Shifts by a count
// outside [0, bits of the dtype) follow PyTorch: left gives 0, right gives -1
// for a negative value and 0 otherwise.
enum class BitwiseOp { And, Or, Xor, LeftShift, RightShift };

}  // namespace lucid
