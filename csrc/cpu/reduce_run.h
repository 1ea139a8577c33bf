// Internal to the cpu/ reduction and normalization kernels: the reducers and
// the loop over one contiguous run (reduction.cpp reduces with them;
// normalization.cpp's fused rows take the same sums and maxima, so they give
// the same bits). Not part of any public interface.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/dispatch.h"

// Runtime AVX2 dispatch for the hot loops on x86-64 glibc (ifunc), as the
// elementwise kernels do; empty elsewhere (arm64 vectorizes for NEON).
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__clang__)
#define LUCID_REDUCE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LUCID_REDUCE_CLONES
#endif

namespace lucid::cpu {
// Internal linkage: each of the two includers gets its own copy, optimised
// as a file-local function like the kernels that call it.
namespace {

// Reducers. A reducer combines elements in lane accumulators of type A (kept
// in vector registers), then folds finished blocks into a wide total W:
// float sums accumulate float32 lanes over short blocks and add blocks in
// double, so the error stays near numpy's pairwise sum.

template <class T> constexpr bool is_float_v = std::is_floating_point_v<compute_t<T>>;
// The lane type of a float reduction: float32 lanes for float32 and the half
// types, double lanes for float64 (whose sums must not lose precision).
template <class T> using float_lane_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
struct SumR {
  using A = std::conditional_t<is_float_v<T>, float_lane_t<T>, uint64_t>;  // integers wrap like int64
  using W = std::conditional_t<is_float_v<T>, double, uint64_t>;
  using Out = std::conditional_t<is_float_v<T>, T, int64_t>;
  static A init() { return A(0); }
  static A load(T v) {
    if constexpr (is_float_v<T>) return static_cast<float_lane_t<T>>(v);
    else return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
  static A step(A a, A b) { return a + b; }
  static W winit() { return W(0); }
  static W wstep(W w, A a) { return w + static_cast<W>(a); }
  static W wcomb(W a, W b) { return a + b; }
};

template <class T>
struct ProdR {
  using A = std::conditional_t<is_float_v<T>, float_lane_t<T>, uint64_t>;
  using W = std::conditional_t<is_float_v<T>, double, uint64_t>;
  using Out = std::conditional_t<is_float_v<T>, T, int64_t>;
  static A init() { return A(1); }
  static A load(T v) { return SumR<T>::load(v); }
  static A step(A a, A b) { return a * b; }
  static W winit() { return W(1); }
  static W wstep(W w, A a) { return w * static_cast<W>(a); }
  static W wcomb(W a, W b) { return a * b; }
};

// Max / Min: a NaN wins and stays (v != v picks it up, and once the lane
// holds NaN no comparison replaces it).
template <class T, bool kMax>
struct ExtremeR {
  using A = std::conditional_t<std::is_same_v<T, bool>, uint8_t, compute_t<T>>;
  using W = A;
  using Out = T;
  static A init() {
    if constexpr (std::is_floating_point_v<A>) return kMax ? -INFINITY : INFINITY;
    else return kMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
  }
  static A load(T v) { return static_cast<A>(v); }
  static A step(A a, A v) {
    if constexpr (std::is_floating_point_v<A>) {
      // `v > a ? v : a` is one maxps, which keeps `a` when v is NaN; the
      // explicit NaN test costs one compare and one blend more.
      if constexpr (kMax) return (v > a || v != v) ? v : a;
      else return (v < a || v != v) ? v : a;
    } else {
      if constexpr (kMax) return v > a ? v : a;
      else return v < a ? v : a;
    }
  }
  static W winit() { return init(); }
  static W wstep(W w, A a) { return step(w, a); }
  static W wcomb(W a, W b) { return step(a, b); }
  // Hot loop for floats: a plain max/min (one maxps/minps) with NaNs
  // tracked in a separate flag, cheaper than the NaN-aware step.
  static constexpr bool kSplitNaN = std::is_floating_point_v<A>;
  static A fast(A a, A v) { return kMax ? (v > a ? v : a) : (v < a ? v : a); }
};

template <class T> struct has_split_nan { static constexpr bool value = false; };
template <class T, bool kMax> struct has_split_nan<ExtremeR<T, kMax>> {
  static constexpr bool value = ExtremeR<T, kMax>::kSplitNaN;
};

template <class T, bool kAll>
struct LogicR {
  using A = uint8_t;
  using W = uint8_t;
  using Out = bool;
  static A init() { return kAll ? 1 : 0; }
  static A load(T v) { return static_cast<compute_t<T>>(v) != 0 ? 1 : 0; }  // NaN counts as true
  static A step(A a, A b) { return kAll ? (a & b) : (a | b); }
  static W winit() { return init(); }
  static W wstep(W w, A a) { return step(w, a); }
  static W wcomb(W a, W b) { return step(a, b); }
};

constexpr int kLanes = 32;            // independent accumulators: 4 AVX registers of float
constexpr int64_t kFlush = 2048;      // elements per lane block before folding into W
constexpr int64_t kTask = 1 << 16;    // elements per parallel task of a long row
constexpr int kCols = 2048;           // output columns per task when reducing an outer axis
constexpr int64_t kRowsPerFlush = 128;
constexpr int64_t kWideCols = 8192;   // widest column block: a float row of it fills about L1
constexpr int64_t kMinWideInner = 512;  // from this width on, tasks split columns, never rows
constexpr int64_t kArgBlock = 2048;   // arg-extreme block: the rescan of a winning block hits L1

// One contiguous run x[0, n) -> W.
template <class R, class T>
LUCID_REDUCE_CLONES typename R::W reduce_run(const T* x, int64_t n) {
  using A = typename R::A;
  typename R::W total = R::winit();
  for (int64_t b = 0; b < n; b += kFlush) {
    int64_t e = std::min(n, b + kFlush);
    A acc[kLanes];
    for (int j = 0; j < kLanes; ++j) acc[j] = R::init();
    int64_t i = b;
    if constexpr (has_split_nan<R>::value) {
      int32_t nan[kLanes] = {};
      for (; i + kLanes <= e; i += kLanes)
        for (int j = 0; j < kLanes; ++j) {
          A v = R::load(x[i + j]);
          acc[j] = R::fast(acc[j], v);
          nan[j] |= v != v;
        }
      int32_t any_nan = 0;
      for (int j = 0; j < kLanes; ++j) any_nan |= nan[j];
      if (any_nan) return std::numeric_limits<A>::quiet_NaN();
    }
    for (; i + kLanes <= e; i += kLanes)
      for (int j = 0; j < kLanes; ++j) acc[j] = R::step(acc[j], R::load(x[i + j]));
    for (; i < e; ++i) acc[0] = R::step(acc[0], R::load(x[i]));
    for (int w = kLanes / 2; w > 0; w /= 2)  // pairwise fold of the lanes
      for (int j = 0; j < w; ++j) acc[j] = R::step(acc[j], acc[j + w]);
    total = R::wstep(total, acc[0]);
  }
  return total;
}

}  // namespace
}  // namespace lucid::cpu
