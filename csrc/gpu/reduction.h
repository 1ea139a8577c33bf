// GPU-stream reductions (MLX). Same contracts as cpu/reduction.h; outputs
// have the dtype rule of ops/reduction.cpp (Sum/Prod: floating keeps its
// dtype, integers and bool give int64; Max/Min keep the dtype; All/Any bool).
#pragma once
#include <vector>

#include "core/reduction_kind.h"
#include "core/tensor.h"

namespace lucid::gpu {

Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes, bool keepdim);
// (min, max) over `axes`; NaN propagates into both.
std::pair<Tensor, Tensor> aminmax(const Tensor& x, const std::vector<int>& axes, bool keepdim);
// First index of the extreme along `axis` (-1: flattened); int64. `values`
// (if not null) receives the extreme values.
Tensor arg_reduce(bool is_max, const Tensor& x, int axis, bool keepdim, Tensor* values);
// Reshapes g to `keep_shape` (x's shape with reduced axes as 1) and
// broadcasts it to `shape`.
Tensor broadcast_reduced(const Tensor& g, const Shape& keep_shape, const Shape& shape);
Tensor equal_mask(const Tensor& x, const Tensor& v);
Tensor prod_of_others(const Tensor& x, const std::vector<int>& axes);
// zeros of `shape` with g placed at `indices` along `axis` (g, indices: keepdim shape).
Tensor scatter_along(const Tensor& g, const Tensor& indices, int axis, const Shape& shape);

}  // namespace lucid::gpu
