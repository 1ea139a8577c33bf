// CPU-stream shape kernels: stride arithmetic and block copies.
#pragma once
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace lucid::cpu {

// Strides that let `new_shape` view the same elements as (shape, strides) in
// row-major order, or nothing when a copy is needed. Same element count.
std::optional<Strides> view_strides(const Shape& shape, const Strides& strides, const Shape& new_shape);

// A view of x selecting start + k*step on every axis. Negative steps give
// negative strides: such a view is only ever handed to copy_into (StridedLoop
// walks signed strides); it must not escape to users.
Tensor strided_view(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                    const Shape& lengths);

// Copies each input into its block of `out` along `axis` (shapes validated).
void cat_into(const std::vector<Tensor>& inputs, int axis, const Tensor& out);

}  // namespace lucid::cpu
