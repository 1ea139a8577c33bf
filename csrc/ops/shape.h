// Shape ops (reshape, permute, expand, basic slicing, concatenation):
// validated entry points. On the CPU stream the view-like ops return strided
// views sharing the input's storage; on the GPU stream MLX arrays are values,
// so the same ops return new arrays.
#pragma once
#include <vector>

#include "core/tensor.h"

namespace lucid::ops {

// x with a new shape of the same size:
// `shape` may hold one -1 (inferred). reshape returns a view when the
// strides allow one (CPU) and copies otherwise; view raises ValueError then.
Tensor reshape(const Tensor& x, const Shape& shape);
// reshape that never copies.
Tensor view(const Tensor& x, const Shape& shape);
// Output axis i is input axis dims[i]; dims is a permutation (negatives wrap).
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
// Broadcasts size-1 axes (and new leading axes) to `shape`; -1 keeps a size.
Tensor expand(const Tensor& x, const Shape& shape);

// Per axis: the elements start, start + step, ... (`length` of them). Steps
// may be negative (then the CPU stream returns a copy: storage strides are
// non-negative); step 0 is rejected. Callers normalise Python slices first.
Tensor slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
             const Shape& lengths);
// Writes `value` (broadcast to the slice's shape, cast to x's dtype) into
// that slice of x, in place. CPU: through a view; GPU: rebinds x's array.
void slice_assign(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                  const Shape& lengths, const Tensor& value);

// Joins tensors of one dtype and device whose shapes agree except on `axis`.
Tensor cat(const std::vector<Tensor>& tensors, int64_t axis);

}  // namespace lucid::ops
