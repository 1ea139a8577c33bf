// Histogram ops (the HistogramObserver's counting step).
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid::ops {

// histc(x, bins, lo, hi): int64 counts of the elements of x in [lo, hi], in
// `bins` equal bins, with the bin index of docs/numerics.md ("Observers"):
//   i = trunc(fl(fl(fl(x - lo) * float(bins)) / fl(hi - lo))),  i = min(i, bins - 1)
// computed in float32 (half inputs widen exactly). Elements outside [lo, hi],
// NaN and ±inf are not counted. The counts are exact integers, so both
// streams agree bit for bit. x: floating; bins >= 1; lo < hi, both finite
// float32 values (ValueError / TypeError naming the argument otherwise).
Tensor histc(const Tensor& x, int64_t bins, double lo, double hi);

}  // namespace lucid::ops
