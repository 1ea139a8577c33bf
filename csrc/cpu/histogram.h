// CPU-stream histogram kernel; ops/histogram.cpp validates the arguments.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid::cpu {

// int64 counts [bins] of contiguous floating x over [lo, hi] (lo < hi finite);
// `wide`: the range's regime (ops::histc_wide_range), which picks the formula.
Tensor histc(const Tensor& x, int64_t bins, float lo, float hi, bool wide);

}  // namespace lucid::cpu
