// QSegments layouts and grid bounds shared by the quantization kernels.
#include <cmath>
#include <limits>

#include "cpu/quantize.h"

namespace lucid::cpu {

QSegments QSegments::per_tensor(int64_t n) {
  QSegments s;
  s.n = n;
  s.row_len = n > 0 ? n : 1;
  return s;
}

QSegments QSegments::per_channel(int64_t outer, int64_t len, int64_t inner) {
  QSegments s;
  s.n = outer * len * inner;
  if (inner == 1) {  // channels are the last axis: a parameter per element of each row
    s.row_len = len > 0 ? len : 1;
    s.per_element = true;
  } else if (outer == 1) {  // rows never wrap: row r uses parameter r, so the walker can hand
    s.row_len = inner;      // whole runs of rows to one kernel call (as per-group rows)
    s.group_stride = 1;
  } else {  // each row of `inner` elements is one channel, repeating every `len` rows
    s.row_len = inner;
    s.period = len > 0 ? len : 1;
  }
  return s;
}

QSegments QSegments::per_group(int64_t outer, int64_t len, int64_t inner, int64_t group) {
  QSegments s;
  s.n = outer * len * inner;
  if (inner == 1) {  // runs of `group` consecutive elements, parameter r for run r
    s.row_len = group;
    s.group_stride = 1;
  } else {  // row (o, j) of `inner` elements uses parameters ((o, j / group), :)
    s.row_len = inner;
    s.period = len;
    s.group = group;
    s.group_stride = len / group;
    s.param_mul = inner;
    s.per_element = true;
  }
  return s;
}

QBounds QBounds::of(int64_t qmin, int64_t qmax) {
  // Round toward the inside of the grid so a clamped value never leaves it.
  float lo = static_cast<float>(qmin), hi = static_cast<float>(qmax);
  if (static_cast<double>(lo) < static_cast<double>(qmin)) lo = std::nextafter(lo, std::numeric_limits<float>::infinity());
  if (static_cast<double>(hi) > static_cast<double>(qmax)) hi = std::nextafter(hi, -std::numeric_limits<float>::infinity());
  return {lo, hi};
}

}  // namespace lucid::cpu
