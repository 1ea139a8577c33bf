// GPU-stream dtype conversion and fills.
#pragma once
#include "core/tensor.h"

namespace lucid::gpu {

// Same semantics as cpu::copy_into's conversions (see cpu/convert.h).
Tensor astype(const Tensor& src, DType dtype);
Tensor full(const Shape& shape, DType dtype, double value);
Tensor contiguous(const Tensor& src);  // a value copy (MLX arrays are values)

}  // namespace lucid::gpu
