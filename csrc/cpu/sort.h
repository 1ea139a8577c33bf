// CPU-stream sort along one axis.
#pragma once
#include "core/tensor.h"

namespace lucid::cpu {

// Stable sort of every line of x along `axis`: values into `values` (x's
// dtype) and source positions into `indices` (int64). Ascending puts NaN
// last, descending puts NaN first; equal keys keep their input order in both
// directions. x is contiguous; outputs are contiguous with x's shape.
void sort(const Tensor& x, int axis, bool descending, const Tensor& values, const Tensor& indices);

}  // namespace lucid::cpu
