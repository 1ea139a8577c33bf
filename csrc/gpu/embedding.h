// GPU-stream embedding lookup through MLX take / scatter_add.
#pragma once
#include "core/tensor.h"

namespace lucid::gpu {

// Any integer index shape; result [*idx.shape, D]. Indices are range-checked by ops.
Tensor embedding(const Tensor& weight, const Tensor& idx);
// [V, D] gradient; rows equal to padding_idx (< 0: none) get nothing.
Tensor embedding_backward(const Tensor& g, const Tensor& idx, int64_t num_weights, int64_t padding_idx);
// (min, max) of an integer tensor, read back to the host for range checks.
std::pair<int64_t, int64_t> index_range(const Tensor& idx);

}  // namespace lucid::gpu
