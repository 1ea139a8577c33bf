// GPU-stream shape ops over MLX arrays (values, not views).
#pragma once
#include <vector>

#include "core/tensor.h"

namespace lucid::gpu {

Tensor reshape(const Tensor& x, const Shape& shape);
Tensor permute(const Tensor& x, const std::vector<int>& dims);
Tensor expand(const Tensor& x, const Shape& shape);
// Same contract as ops::slice (arguments already validated).
Tensor slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
             const Shape& lengths);
// Rebinds x to a copy with the slice replaced by value (broadcast + cast).
void slice_assign(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                  const Shape& lengths, const Tensor& value);
Tensor cat(const std::vector<Tensor>& inputs, int axis);

}  // namespace lucid::gpu
