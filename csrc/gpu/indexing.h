// GPU-stream gather / scatter over MLX arrays; arguments validated by ops/.
#pragma once
#include <utility>

#include "core/tensor.h"

namespace lucid::gpu {

std::pair<int64_t, int64_t> index_bounds(const Tensor& index);  // evaluates; index non-empty
Tensor wrap_negative(const Tensor& index, int64_t size);
Tensor gather(const Tensor& x, int axis, const Tensor& index);
Tensor scatter_add(const Tensor& self, int axis, const Tensor& index, const Tensor& src);
Tensor index_select(const Tensor& x, int axis, const Tensor& index);

}  // namespace lucid::gpu
