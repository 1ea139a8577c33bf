// CPU-stream histogram kernel; ops/histogram.cpp validates the arguments.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid::cpu {

// int64 counts [bins] of contiguous floating x over [lo, hi] (lo < hi finite).
Tensor histc(const Tensor& x, int64_t bins, float lo, float hi);

}  // namespace lucid::cpu
