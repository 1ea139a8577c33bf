// Embedding lookup (rows of a [V, D] table by integer index) and its
// gradient; validation, index range checks, then cpu:: or gpu::.
#pragma once
#include "core/tensor.h"

namespace lucid::ops {

// The rows of the table `weight` at `indices`:
// weight [V, D], indices any integer shape -> [*indices.shape, D].
// IndexError when an index lies outside [0, V).
Tensor embedding(const Tensor& weight, const Tensor& indices);
// dL/dweight [num_weights, D]; rows equal to padding_idx (< 0: none) stay zero.
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights, int64_t padding_idx);

}  // namespace lucid::ops
