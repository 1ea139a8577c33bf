// GPU-stream gather / scatter over MLX arrays; arguments validated by ops/.
#pragma once
#include <utility>

#include "core/tensor.h"

namespace lucid::gpu {

std::pair<int64_t, int64_t> index_bounds(const Tensor& index);  // evaluates; index non-empty
Tensor wrap_negative(const Tensor& index, int64_t size);
Tensor gather(const Tensor& x, int axis, const Tensor& index);
// A copy of self with src added (accumulate) or stored at index along axis.
// Stored duplicates: which one wins is unspecified (MLX scatters in parallel).
Tensor scatter(const Tensor& self, int axis, const Tensor& index, const Tensor& src, bool accumulate);
Tensor index_select(const Tensor& x, int axis, const Tensor& index);

}  // namespace lucid::gpu
