// GPU-stream cumsum / cumprod (MLX's scan). Inputs arrive in the result
// dtype; float16 / bfloat16 scan in float32 and round once per output.
#pragma once
#include "core/tensor.h"

namespace lucid::gpu {

Tensor cumsum(const Tensor& x, int axis);
Tensor cumprod(const Tensor& x, int axis);

}  // namespace lucid::gpu
