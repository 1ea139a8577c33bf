// GPU-stream histogram (MLX); same contract as cpu/histogram.h.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid::gpu {

Tensor histc(const Tensor& x, int64_t bins, float lo, float hi, bool wide);

}  // namespace lucid::gpu
