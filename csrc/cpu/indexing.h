// CPU-stream gather / scatter kernels. Indices are int64 and already
// validated by ops/indexing.cpp.
#pragma once
#include <utility>

#include "core/tensor.h"

namespace lucid::cpu {

std::pair<int64_t, int64_t> index_bounds(const Tensor& index);  // (min, max); index non-empty
// index -> index + size where negative, into a new contiguous tensor.
Tensor wrap_negative(const Tensor& index, int64_t size);
// out (contiguous, index's shape) = x gathered along axis.
void gather(const Tensor& x, int axis, const Tensor& index, const Tensor& out);
// out (contiguous, holds self's values) gets src at index along axis: added
// (accumulate) or stored (the last of repeated indices wins).
void scatter(const Tensor& out, int axis, const Tensor& index, const Tensor& src, bool accumulate);
// out (contiguous) = slices of x (contiguous) at index (contiguous, 1-d) along axis.
void index_select(const Tensor& x, int axis, const Tensor& index, const Tensor& out);

}  // namespace lucid::cpu
