// Names of QFunctional's fused binary ops, shared by both streams' kernels.
#pragma once

namespace lucid {

// quantize(op(dequantize(a), dequantize(b))): Add, AddRelu (max with 0 before
// quantizing, relu(NaN) = NaN) or Mul, each one float32 operation.
enum class QBinaryOp { Add, AddRelu, Mul };

}  // namespace lucid
