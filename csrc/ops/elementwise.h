// Elementwise ops: validation, dtype promotion and broadcasting, then
// dispatch to cpu:: or gpu:: by the inputs' device.
#pragma once
#include "core/tensor.h"

namespace lucid::ops {

Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);  // true division: integer inputs give float32

}  // namespace lucid::ops
