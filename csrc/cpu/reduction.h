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

// softmax (log: log_softmax) of each row of a contiguous float32 x along its
// last axis, into out (contiguous, x's shape): per row the composed form's
// operations element for element — the row's max as amax takes it, x - max,
// exp (fast::exp_f32, the exp kernel's), the sum of those in reduce's order,
// then / sum (log: - log(sum), fast::log_f32) — so the bits are those of
// amax, sub, exp, sum, div run one after the other, in one pass per row.
// Only for rows of 1 .. softmax_row_limit() elements (a longer row's sum
// folds task partials: the caller composes the ops instead).
int64_t softmax_row_limit();
void softmax_rows(const Tensor& x, const Tensor& out, bool log);
// layer_norm over the last `row` elements of a contiguous float32 x, the same
// way: per row mean = sum / n, centred = x - mean, var = sum(centred^2) / n,
// rstd = 1 / sqrt(var + eps), xhat = centred * rstd, y = xhat * w + b (each
// optional, contiguous, `row` elements) — the composed ops' bits. xhat may be
// null (no w and b: y is xhat); rstd gets one value per row. Rows of 1 ..
// softmax_row_limit() elements.
void layer_norm_rows(const Tensor& x, int64_t row, const float* w, const float* b, float eps, const Tensor& y,
                     const Tensor* xhat, const Tensor& rstd);

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
