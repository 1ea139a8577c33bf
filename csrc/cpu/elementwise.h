// CPU-stream elementwise kernels. Inputs arrive already converted to the
// compute dtype by ops/elementwise.cpp; outputs are freshly allocated and
// contiguous. Scalar definitions: cpu/elementwise_functors.h.
#pragma once
#include "core/elementwise_kind.h"
#include "core/tensor.h"

namespace lucid::cpu {

// out = op(x); x is contiguous and has out's dtype and shape.
void unary(UnaryOp op, const Tensor& x, const Tensor& out);
// out (bool) = op(x); x is contiguous, floating, of out's shape.
void predicate(PredicateOp op, const Tensor& x, const Tensor& out);
// out = op(a, b); a and b share out's dtype and broadcast to out's shape.
void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out);
// out (bool) = op(a, b); a and b share one dtype and broadcast to out's shape.
void compare(CompareOp op, const Tensor& a, const Tensor& b, const Tensor& out);
// out = cond ? a : b; cond is bool, a and b have out's dtype; all broadcast.
void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out);
// out = min(max(x, lo), hi) in one pass: x contiguous and integral, lo / hi 0-d of
// x's dtype, out like x.
void clamp_integer(const Tensor& x, const Tensor& lo, const Tensor& hi, const Tensor& out);

}  // namespace lucid::cpu
