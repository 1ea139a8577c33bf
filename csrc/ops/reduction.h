// Reductions: axis validation, dtype rules, then dispatch to cpu:: or gpu::.
//
// `dims`: axes to reduce (any order, negative counts from the end);
// std::nullopt reduces every axis; an empty list reduces none. A repeated
// axis is a ValueError, an out-of-range one an IndexError naming the
// function and 'dim'. keepdim keeps reduced axes as size 1.
//
// Dtypes: sum/prod of integers or bool give int64; float16/bfloat16 are
// accumulated in float32 and rounded once; mean/var of integers or bool give
// float32. max/min/amax/amin keep the dtype and propagate NaN. all/any give
// bool. Empty reductions: sum 0, prod 1, mean/var nan, all true, any false;
// max/min/argmax over an empty axis raise ValueError.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace lucid::ops {

using Dims = std::optional<std::vector<int64_t>>;

// The sum over `dims`; `dtype` (optional) is the result's.
Tensor sum(const Tensor& x, const Dims& dims, bool keepdim, std::optional<DType> dtype);
// The product over `dims`; `dtype` (optional) is the result's.
Tensor prod(const Tensor& x, const Dims& dims, bool keepdim, std::optional<DType> dtype);
// The mean over `dims`.
Tensor mean(const Tensor& x, const Dims& dims, bool keepdim);
// The variance over `dims`:
// sum((x - mean)^2) / max(n - correction, 0)
Tensor var(const Tensor& x, const Dims& dims, double correction, bool keepdim);
// The maximum over `dims`.
Tensor amax(const Tensor& x, const Dims& dims, bool keepdim);
// The minimum over `dims`.
Tensor amin(const Tensor& x, const Dims& dims, bool keepdim);
// (amin, amax) over `dims`, in one pass over x when the kept axes are at most one (all
// reduced, or all but one: per-tensor and per-channel statistics); otherwise
// amin and amax. Same values, dtypes and errors as amin / amax.
std::pair<Tensor, Tensor> aminmax(const Tensor& x, const Dims& dims, bool keepdim);
// Whether every element over `dims` is nonzero (bool).
Tensor all(const Tensor& x, const Dims& dims, bool keepdim);
// Whether some element over `dims` is nonzero (bool).
Tensor any(const Tensor& x, const Dims& dims, bool keepdim);
// int64 index of the first max/min (NaN counts as the extreme) along dim,
// or of the flattened tensor when dim is nullopt.
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim);
// As argmax, for the first minimum.
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim);
// (values, int64 indices) along one dim; the index is argmax/argmin's.
std::pair<Tensor, Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim);
// As max_dim, for the minimum.
std::pair<Tensor, Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim);

// Gradient helpers (used by the Python autograd Functions).
// g has the reduced shape of `shape` over `dims` (keepdim or not); returns g
// broadcast back to `shape` (a new tensor).
Tensor broadcast_reduced(const Tensor& g, const Shape& shape, const Dims& dims);
// 1 where x equals v (broadcast from its reduced shape) or both are NaN, else 0; x's dtype.
Tensor equal_mask(const Tensor& x, const Tensor& v, const Dims& dims);
// For every element of x, the product of the other elements of its group over dims.
Tensor prod_of_others(const Tensor& x, const Dims& dims);
// zeros of `shape` with g (reduced shape over dim) placed at `indices` along dim.
Tensor scatter_along(const Tensor& g, const Tensor& indices, const Shape& shape, int64_t dim, bool keepdim);

}  // namespace lucid::ops
