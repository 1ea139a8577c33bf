// CPU-stream copies and dtype conversions.
#pragma once
#include "core/tensor.h"

namespace lucid::cpu {

// Writes src (any strides, broadcast to dst's shape) into dst (any strides),
// converting element types. Float -> integer truncates toward zero,
// saturates out-of-range values and maps NaN to 0; integer -> narrower
// integer wraps (two's complement) as numpy does.
void copy_into(const Tensor& src, const Tensor& dst);
void fill(const Tensor& dst, double value);  // dst contiguous

}  // namespace lucid::cpu
