// Names of the elementwise ops, shared by both streams' kernels so that each
// op is spelled the same in cpu/, gpu/ and ops/.
#pragma once

namespace lucid {

enum class UnaryOp { Neg, Exp };
enum class BinaryOp { Add, Sub, Mul, Div };

}  // namespace lucid
