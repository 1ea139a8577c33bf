// Internal to the cpu/ quantization kernels: the segment walker and the
// vectorization attribute. Not part of any public interface.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/thread_pool.h"
#include "cpu/quantize.h"

// Hot loops get an AVX2 clone chosen at load time on x86-64 glibc (the
// baseline build already has SSE4.1, so rint becomes roundps). Elsewhere the
// macro is empty and the baseline loop is used. AVX2 does not enable FMA, and
// -ffp-contract=off forbids contraction anyway.
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && !defined(__clang__)
#define LUCID_QUANT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LUCID_QUANT_CLONES
#endif

// Scalar reference functions must stay scalar: they are what the tests hold
// the vectorized kernels against.
#if defined(__GNUC__) && !defined(__clang__)
#define LUCID_NO_VECTORIZE __attribute__((optimize("no-tree-vectorize")))
#else
#define LUCID_NO_VECTORIZE
#endif

namespace lucid::cpu {

// Calls run(begin, len, p) for rows sharing parameter p, or
// elem(begin, len, p) where element j uses parameter p + j, over chunks of
// the flat index space handed out by the thread pool (rows may be split).
// The row's parameter index is advanced incrementally: divisions per row
// would cost more than quantizing a short group. When row r simply uses
// parameter r (per-group runs along the last axis), whole rows go to
// groups(begin, rows, row_len, p_first) in one call instead.
template <class Run, class Elem, class Groups>
void for_each_segment(const QSegments& seg, bool threaded, Run&& run, Elem&& elem, Groups&& groups) {
  if (seg.n == 0) return;
  bool row_is_param = !seg.per_element && seg.period == 1 && seg.group == 1 && seg.group_stride == 1 &&
                      seg.param_mul == 1;
  auto body = [&](int64_t lo, int64_t hi) {
    int64_t r = lo / seg.row_len, off = lo - r * seg.row_len;
    if (row_is_param) {
      int64_t i = lo;
      if (off) {  // finish the row the chunk starts inside
        int64_t len = std::min(seg.row_len - off, hi - i);
        run(i, len, r++);
        i += len;
      }
      int64_t rows = (hi - i) / seg.row_len;
      if (rows) groups(i, rows, seg.row_len, r);
      i += rows * seg.row_len;
      r += rows;
      if (i < hi) run(i, hi - i, r);
      return;
    }
    int64_t q = r / seg.period, m = r % seg.period;  // r = q * period + m
    int64_t gq = m / seg.group, gm = m % seg.group;  // m = gq * group + gm
    for (int64_t i = lo; i < hi;) {
      int64_t len = std::min(seg.row_len - off, hi - i);
      int64_t p = (q * seg.group_stride + gq) * seg.param_mul;
      if (seg.per_element) elem(i, len, p + off);
      else run(i, len, p);
      i += len;
      off = 0;
      if (++gm == seg.group) gm = 0, ++gq;
      if (++m == seg.period) m = 0, gq = 0, gm = 0, ++q;
    }
  };
  if (threaded) parallel_for(seg.n, kElementwiseGrain, body);
  else body(0, seg.n);
}

// Without a batched kernel, groups are runs.
template <class Run, class Elem>
void for_each_segment(const QSegments& seg, bool threaded, Run&& run, Elem&& elem) {
  for_each_segment(seg, threaded, run, elem, [&](int64_t i, int64_t rows, int64_t len, int64_t p) {
    for (int64_t k = 0; k < rows; ++k) run(i + k * len, len, p + k);
  });
}

// Calls f(std::integral_constant<int, G>) with G = len for the usual group
// sizes (so kernels can fix their inner trip count) and G = 0 otherwise.
template <class F>
void with_group_length(int64_t len, F&& f) {
  switch (len) {
    case 32: return f(std::integral_constant<int, 32>{});
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    case 256: return f(std::integral_constant<int, 256>{});
    default: return f(std::integral_constant<int, 0>{});
  }
}

// Float widening of a stored element (half types convert exactly).
template <class T> inline float widen(T v) { return static_cast<float>(v); }

// The quantize formula of docs/numerics.md for one element: t = x / s;
// r = rint(t); v = r + float(z); clamp in float; NaN -> z. NaN is mapped in
// the integer domain: float(z) rounds 2^31 - 1 up to 2^31, which no int32
// cast can take. The NaN lane casts `lo` (always in range) and is then
// replaced by z with a bit mask, which keeps the loop vectorizable.
inline int32_t quantize_code(float x, float s, int32_t z, float lo, float hi) {
  float t = x / s;
  float r = std::nearbyint(t);
  float v = r + static_cast<float>(z);
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  int32_t nan = -static_cast<int32_t>(v != v);  // all ones for NaN x
  int32_t c = static_cast<int32_t>(v != v ? lo : v);
  return (c & ~nan) | (z & nan);
}

}  // namespace lucid::cpu
