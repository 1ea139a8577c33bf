// CPU-stream embedding lookup: rows of a [V, D] table picked by integer indices.
#pragma once
#include "core/tensor.h"

namespace lucid::cpu {

// out[i, :] = weight[idx[i], :] for the flattened int64 indices (already range-checked);
// any dtype: rows are copied as bytes.
void embedding(const Tensor& weight, const Tensor& idx, const Tensor& out);
// gw = 0, then gw[idx[i], :] += g[i, :] (float32 or float64, g's dtype = gw's), skipping rows equal to padding_idx (< 0: none).
void embedding_backward(const Tensor& g, const Tensor& idx, const Tensor& gw, int64_t padding_idx);

}  // namespace lucid::cpu
