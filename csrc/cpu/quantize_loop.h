// Internal to the cpu/ quantization kernels: the segment walker and the
// vectorization attribute. Not part of any public interface.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/thread_pool.h"
#include "cpu/quantization.h"

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
template <class Run, class Elem>
void for_each_segment(const QSegments& seg, bool threaded, Run&& run, Elem&& elem) {
  if (seg.n == 0) return;
  auto body = [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi;) {
      int64_t r = i / seg.row_len, off = i - r * seg.row_len;
      int64_t len = std::min(seg.row_len - off, hi - i);
      int64_t p = seg.param_index(r);
      if (seg.per_element) elem(i, len, p + off);
      else run(i, len, p);
      i += len;
    }
  };
  if (threaded) parallel_for(seg.n, kElementwiseGrain, body);
  else body(0, seg.n);
}

// Float widening of a stored element (half types convert exactly).
template <class T> inline float widen(T v) { return static_cast<float>(v); }

// The quantize formula of docs/numerics.md for one element, in float:
// t = x / s; r = rint(t); v = r + z; clamp; NaN -> z.
inline float quantize_value(float x, float s, float zf, float lo, float hi) {
  float t = x / s;
  float r = std::nearbyint(t);
  float v = r + zf;
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  return v != v ? zf : v;
}

}  // namespace lucid::cpu
