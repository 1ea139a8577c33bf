// Index-driven reads and writes: gather, index_select, scatter_add,
// index_add. Index tensors hold any integer dtype; their values are checked
// against the indexed axis on both streams before any kernel runs (MLX does
// not bounds-check), so no kernel ever reads or writes out of bounds.
#pragma once
#include <string>

#include "core/tensor.h"

namespace lucid::ops {

// out[i][j][k] = x[index[i][j][k]][j][k] (for axis 0); index has x's ndim and
// is no larger than x on the other axes; out has index's shape.
Tensor gather(const Tensor& x, int64_t axis, const Tensor& index);
// A copy of `self` with src[i][j][k] added at self[index[i][j][k]][j][k]
// (axis 0); index is no larger than src anywhere nor than self off `axis`.
Tensor scatter_add(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src);
// Same contract, but src's values are stored, not added; where an index
// repeats, the CPU stream keeps the last and the GPU stream an unspecified one.
Tensor scatter(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src);
// The slices x[..., index[m], ...] along `axis`; index is 1-d (or 0-d) with
// values in [0, size).
Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index);
// A copy of `self` with src's slices added at rows index[m] along `axis`
// (src: self's shape with `axis` replaced by index's length).
Tensor index_add(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src);
// Same contract, but rows are stored, not added (repeats: as in scatter).
Tensor index_copy(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src);
// index (any integer dtype) as int64 with values in [-size, size) wrapped into
// [0, size) (Python's negative indices); IndexError naming `fn` otherwise.
Tensor wrap_index(const Tensor& index, int64_t size, int64_t axis, const std::string& fn);

}  // namespace lucid::ops
