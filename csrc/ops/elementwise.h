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
#include <string>

#include "core/tensor.h"

namespace lucid::ops {

Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor relu(const Tensor& x);

Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor gelu(const Tensor& x, const std::string& approximate);  // "none" (erf form) or "tanh"

Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);  // half to even

Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
Tensor logical_not(const Tensor& x);

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);  // true division: integer inputs give float32
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);  // NaN propagates
Tensor minimum(const Tensor& a, const Tensor& b);
// Python / PyTorch division with rounding: floor_divide rounds the quotient
// toward -inf, remainder = a - floor_divide(a, b) * b (the divisor's sign),
// fmod = a - trunc(a / b) * b (the dividend's sign). Integer inputs stay
// integer and raise ValueError when `other` holds a zero; floats follow IEEE
// (x // 0 is +-inf or NaN, x % 0 is NaN). TypeError for two bool tensors.
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Tensor& b);

Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);

// cond ? a : b, broadcasting all three; cond of any dtype is tested `!= 0`.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

}  // namespace lucid::ops
