// Inclusive scans along one axis: cumsum(x, dim), cumprod(x, dim).
// Integer and bool inputs give int64 (as PyTorch); floating inputs keep their
// dtype. `dim` may be negative; a 0-d tensor accepts 0 / -1. The CPU stream
// accumulates strictly left to right; MLX's scan may associate differently,
// so float results agree across streams only within the tolerance stated in
// docs/numerics.md ("What is not bit-identical"). Integers are exact (int64
// wraps on overflow on both streams).
#pragma once
#include "core/tensor.h"

namespace lucid::ops {

// The inclusive cumulative sum along `dim`.
Tensor cumsum(const Tensor& x, int64_t dim);
// The inclusive cumulative product along `dim`.
Tensor cumprod(const Tensor& x, int64_t dim);

}  // namespace lucid::ops
