// CPU-stream reduction kernels. The ops layer (ops/reduction.cpp) validates
// axes, picks the output dtype and allocates outputs; these only compute.
#pragma once
#include <vector>

#include "core/reduction_kind.h"
#include "core/tensor.h"

namespace lucid::cpu {

// out[kept] = op over the `axes` of x (sorted, unique, in range). x may have
// any strides; out is contiguous with x's kept axes in order (reduced axes
// either dropped or size 1: only the element order matters). Sum/Prod write
// the wide accumulator converted to out's dtype; an empty reduction writes
// the identity (0, 1, true, false). Max/Min of an empty axis is the ops
// layer's error to raise, never reached here.
void reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes, const Tensor& out);

// min[c] and max[c] over x viewed as (outer, channels, inner) (contiguous,
// floating), in one pass; a NaN in a channel makes both NaN (as amin / amax).
// mn, mx: contiguous, x's dtype, `channels` elements.
void aminmax(const Tensor& x, int64_t outer, int64_t channels, int64_t inner, const Tensor& mn, const Tensor& mx);

// Index of the first maximum (or minimum) along `axis` (a NaN counts as the
// extreme, the first NaN wins); axis == -1 means over the flattened tensor.
// `values` (optional, x's dtype) receives the extreme itself. indices: int64.
void arg_reduce(bool is_max, const Tensor& x, int axis, const Tensor& indices, const Tensor* values);

// mask[i] = 1 where x[i] == v[i] or both are NaN, else 0; x and v have one
// shape, mask (contiguous, floating) too. Used by the amax/amin gradient.
void equal_mask(const Tensor& x, const Tensor& v, const Tensor& mask);

// out (contiguous, x's shape, floating) = for every element, the product of
// the other elements of its reduction group over `axes`: the gradient of
// prod, exact when some elements are zero (prefix x suffix products).
void prod_of_others(const Tensor& x, const std::vector<int>& axes, const Tensor& out);

// out (contiguous, zero-filled by the caller) gets g[k] at position
// indices[k] along `axis`; g and indices have out's shape with `axis` of
// size 1. The gradient of max/min with a dim.
void scatter_along(const Tensor& g, const Tensor& indices, int axis, const Tensor& out);

}  // namespace lucid::cpu
