// Histogram ops (the HistogramObserver's counting step).
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid::ops {

// histc(x, bins, lo, hi): int64 counts of the elements of x in [lo, hi], in
// `bins` equal bins, with the bin index of docs/numerics.md ("Histogram bin
// index"), computed in float32 (half inputs widen exactly):
//   ordinary range, fl(fl(hi - lo) * bins) finite (PyTorch's formula):
//     i = trunc(fl(fl(fl(x - lo) * float(bins)) / fl(hi - lo)))
//   wide range (that product overflows), with no intermediate that can overflow:
//     i = trunc(fl(fl(fl(fl(fl(x * 0.5) - fl(lo * 0.5)) * 2^-24) * float(bins)) /
//                  fl(fl(fl(hi * 0.5) - fl(lo * 0.5)) * 2^-24)))
//   and then i = min(i, bins - 1): every finite x in [lo, hi] is counted. Elements outside [lo, hi],
// NaN and ±inf are not counted. The counts are exact integers, so both
// streams agree bit for bit. x: floating; bins >= 1; lo < hi, both finite
// float32 values (ValueError / TypeError naming the argument otherwise).
Tensor histc(const Tensor& x, int64_t bins, double lo, double hi);

// Whether [lo, hi] with `bins` bins takes the wide-range formula above.
bool histc_wide_range(int64_t bins, float lo, float hi);

}  // namespace lucid::ops
