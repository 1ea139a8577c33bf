// Sorting along one axis. sort(x, dim, descending) returns (values, int64
// indices) with values = x gathered at indices. The sort is stable in both
// directions (equal keys keep increasing input position, PyTorch's
// stable=True), NaN sorts above every number (last ascending, first
// descending), and both streams give identical results. topk, argsort,
// median and unique (python/lucid/_ops/sorting.py) are built on it.
#pragma once
#include <utility>

#include "core/tensor.h"

namespace lucid::ops {

// (values, int64 indices) of x sorted along `dim`, stably.
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending);

}  // namespace lucid::ops
