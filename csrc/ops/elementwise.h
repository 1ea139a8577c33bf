// Elementwise ops: validation, dtype rules and broadcasting, then dispatch to
// cpu:: or gpu:: by the inputs' device. Dtype rules:
//   - transcendental ops (exp .. gelu) promote integer/bool inputs to float32;
//   - neg/abs/sign/relu keep numeric dtypes and reject bool (TypeError);
//   - floor/ceil/round are the identity (a copy) on integers, reject bool;
//   - isnan/isinf/isfinite, comparisons and logical_* return bool;
//   - binary ops promote with promote_types and broadcast; div is true
//     division (integers give float32); on bool inputs add/maximum act as
//     logical or, mul/minimum as logical and, sub and pow raise TypeError.
// Mixed devices raise ValueError naming the function.
#pragma once
#include <optional>
#include <string>

#include "core/tensor.h"

namespace lucid::ops {

// -x.
Tensor neg(const Tensor& x);
// |x|.
Tensor abs(const Tensor& x);
// The sign of x: -1, 0 or 1.
Tensor sign(const Tensor& x);
// max(x, 0).
Tensor relu(const Tensor& x);

// e^x.
Tensor exp(const Tensor& x);
// The natural logarithm.
Tensor log(const Tensor& x);
// The square root.
Tensor sqrt(const Tensor& x);
// 1 / sqrt(x).
Tensor rsqrt(const Tensor& x);
// The sine.
Tensor sin(const Tensor& x);
// The cosine.
Tensor cos(const Tensor& x);
// The hyperbolic tangent.
Tensor tanh(const Tensor& x);
// 1 / (1 + e^-x).
Tensor sigmoid(const Tensor& x);
// The error function.
Tensor erf(const Tensor& x);
// x * Phi(x), with `approximate` "none" (the erf form) or "tanh".
Tensor gelu(const Tensor& x, const std::string& approximate);

// x rounded down to an integer value.
Tensor floor(const Tensor& x);
// x rounded up to an integer value.
Tensor ceil(const Tensor& x);
// x rounded to the nearest integer value, half to even.
Tensor round(const Tensor& x);

// Whether x is NaN (bool).
Tensor isnan(const Tensor& x);
// Whether x is +-inf (bool).
Tensor isinf(const Tensor& x);
// Whether x is neither NaN nor +-inf (bool).
Tensor isfinite(const Tensor& x);
// x == 0 (bool).
Tensor logical_not(const Tensor& x);

// a + b.
Tensor add(const Tensor& a, const Tensor& b);
// a - b.
Tensor sub(const Tensor& a, const Tensor& b);
// a * b.
Tensor mul(const Tensor& a, const Tensor& b);
// a / b, true division: integer inputs give float32.
Tensor div(const Tensor& a, const Tensor& b);
// a to the power b.
Tensor pow(const Tensor& a, const Tensor& b);
// The larger of a and b; NaN propagates.
Tensor maximum(const Tensor& a, const Tensor& b);
// The smaller of a and b; NaN propagates.
Tensor minimum(const Tensor& a, const Tensor& b);
// minimum(maximum(x, lo), hi) in one pass where that is the same thing exactly: an
// integral contiguous x on the CPU stream with 0-d bounds of its dtype (ReLU6 of
// quantized codes); nullopt otherwise, and the caller composes the two ops.
std::optional<Tensor> clamp_fused(const Tensor& x, const Tensor& lo, const Tensor& hi);
// Python / PyTorch division with rounding: floor_divide rounds the quotient
// toward -inf, remainder = a - floor_divide(a, b) * b (the divisor's sign),
// fmod = a - trunc(a / b) * b (the dividend's sign). Integer inputs stay
// integer and raise ValueError when `other` holds a zero; floats follow IEEE
// (x // 0 is +-inf or NaN, x % 0 is NaN). TypeError for two bool tensors.

// a / b rounded toward -inf.
Tensor floor_divide(const Tensor& a, const Tensor& b);
// a - floor_divide(a, b) * b.
Tensor remainder(const Tensor& a, const Tensor& b);
// a - trunc(a / b) * b.
Tensor fmod(const Tensor& a, const Tensor& b);

// a == b (bool).
Tensor eq(const Tensor& a, const Tensor& b);
// a != b (bool).
Tensor ne(const Tensor& a, const Tensor& b);
// a < b (bool).
Tensor lt(const Tensor& a, const Tensor& b);
// a <= b (bool).
Tensor le(const Tensor& a, const Tensor& b);
// a > b (bool).
Tensor gt(const Tensor& a, const Tensor& b);
// a >= b (bool).
Tensor ge(const Tensor& a, const Tensor& b);
// a != 0 and b != 0 (bool).
Tensor logical_and(const Tensor& a, const Tensor& b);
// a != 0 or b != 0 (bool).
Tensor logical_or(const Tensor& a, const Tensor& b);
// Exactly one of a, b nonzero (bool).
Tensor logical_xor(const Tensor& a, const Tensor& b);

// cond ? a : b, broadcasting all three; cond of any dtype is tested `!= 0`.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

}  // namespace lucid::ops
