// The math family: the elementwise functions beyond elementwise.h's, with
// PyTorch's names (definitions: docs/numerics.md, "Extra elementwise math"):
//   unary  tan sinh cosh asin acos atan asinh acosh atanh trunc frac log10
//          exp2 erfc erfinv lgamma digamma sinc: integer and bool inputs
//          promote to float32, except trunc (identity on integers; TypeError
//          for bool) and frac (TypeError for integers and bool, as PyTorch);
//   bool   signbit isposinf isneginf, on any dtype;
//   binary hypot logaddexp logaddexp2 xlogy copysign fmax fmin nextafter:
//          promote_types then broadcast; integer results promote to float32,
//          except fmax / fmin (integers keep their dtype: maximum / minimum)
//          and nextafter (TypeError unless floating).
// Accuracy: the CPU stream rounds a double-precision result once
// (cpu/math.h); the GPU stream computes in float32 with MLX ops. Not
// bit-identical across streams, except the bool predicates, trunc, copysign,
// fmax / fmin and nextafter, which are exact on both.
#pragma once
#include "core/math_kind.h"
#include "core/tensor.h"

namespace lucid::ops {

// y = op(x) for tan .. sinc; `fn` names the op in error messages.
Tensor math_unary(MathUnaryOp op, const char* fn, const Tensor& x);
// bool y = signbit / isposinf / isneginf of x.
Tensor math_predicate(MathPredicate op, const char* fn, const Tensor& x);
// y = op(a, b) for hypot .. nextafter, broadcast.
Tensor math_binary(MathBinaryOp op, const char* fn, const Tensor& a, const Tensor& b);

}  // namespace lucid::ops
