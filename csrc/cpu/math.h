// CPU-stream kernels of the math family (ops/math.h has the op list).
// As in cpu/special.h, each float element is widened to double, passed to the
// C library's double function (or a double-precision routine here: erfinv,
// digamma) and rounded once to the output type, so float32 results are within
// about 0.5 ulp of the exact value. nextafter works on the output type's own
// bits (exact). Scalar loops: accuracy first.
#pragma once
#include "core/math_kind.h"
#include "core/tensor.h"

namespace lucid::cpu {

// out = op(x); x contiguous, floating, of out's dtype and shape.
void math_unary(MathUnaryOp op, const Tensor& x, const Tensor& out);
// out (bool) = op(x); x contiguous of any dtype and out's shape.
void math_predicate(MathPredicate op, const Tensor& x, const Tensor& out);
// out = op(a, b); a and b contiguous, floating, of out's dtype and shape.
void math_binary(MathBinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out);

// The double-precision routines the loops use (also for tests of the formulas).
double erfinv_double(double x);
double digamma_double(double x);

}  // namespace lucid::cpu
