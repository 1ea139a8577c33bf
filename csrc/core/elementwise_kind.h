// Names of the elementwise ops, shared by both streams' kernels so that each
// op is spelled the same in cpu/, gpu/ and ops/.
#pragma once

namespace lucid {

// y = op(x), same dtype in and out (ops/ chooses that dtype).
enum class UnaryOp {
  Neg, Abs, Sign, Relu,                     // numeric, keep the dtype
  Exp, Log, Sqrt, Rsqrt, Sin, Cos, Tanh,    // floating only
  Sigmoid, Erf, Gelu, GeluTanh,
  Floor, Ceil, Round,                       // floating only (integers: identity in ops/)
};

// bool = op(x) over a floating x.
enum class PredicateOp { IsNan, IsInf, IsFinite };

// y = op(a, b), a, b and y share one dtype. FloorDivide / Remainder round the
// quotient toward -inf (the remainder takes the divisor's sign), Fmod toward 0
// (the dividend's sign), as in Python and PyTorch.
enum class BinaryOp { Add, Sub, Mul, Div, Pow, Maximum, Minimum, FloorDivide, Remainder, Fmod };

// bool = op(a, b), a and b share one dtype; the logical ones test `!= 0`.
enum class CompareOp { Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr, LogicalXor };

}  // namespace lucid
