// GPU-stream sort along one axis (MLX's argsort). Same contract as
// cpu/sort.h: (values, int64 indices), stable in both directions, NaN last
// ascending and first descending.
#pragma once
#include <utility>

#include "core/tensor.h"

namespace lucid::gpu {

std::pair<Tensor, Tensor> sort(const Tensor& x, int axis, bool descending);

}  // namespace lucid::gpu
