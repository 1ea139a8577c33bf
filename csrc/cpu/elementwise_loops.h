// The loops every elementwise kernel runs: one contiguous pass split over the
// thread pool (the case that matters for speed), a tensor-scalar pass, and a
// strided walk for broadcasting / non-contiguous operands.
#pragma once
#include <type_traits>

#include "core/dispatch.h"
#include "core/strided.h"
#include "core/tensor.h"
#include "core/thread_pool.h"

// Runtime AVX-512 / AVX2 dispatch for the hot loops on x86-64 glibc (ifunc); empty
// elsewhere (macOS arm64 vectorizes for NEON by default).
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__clang__)
#define LUCID_AVX2_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LUCID_AVX2_CLONES
#endif

namespace lucid::cpu {

template <class C, class T>
inline C load(T v) { return static_cast<C>(v); }

template <class O, class C>
inline O store(C v) {
  if constexpr (is_half_v<O>) return O(static_cast<float>(v));
  else return static_cast<O>(v);
}

// y[i] = f(x[i]) for i in [lo, hi).
template <class T, class O, class F>
LUCID_AVX2_CLONES void map1(F f, const T* __restrict x, O* __restrict y, int64_t lo, int64_t hi) {
  using C = compute_t<T>;
  for (int64_t i = lo; i < hi; ++i) y[i] = store<O>(f(load<C>(x[i])));
}

template <class T, class O, class F>
void unary_contiguous(F f, const T* x, O* y, int64_t n) {
  if (n <= 0) return;
  parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) { map1<T, O>(f, x, y, lo, hi); });
}

// y[i] = f(x[i]) for a functor whose fast form f.fast is only valid where
// f.in_fast_range(x) (sin/cos: large |x|, inf, NaN need f.exact). Each block
// is computed with the vectorized fast form first; the rare block that has an
// out-of-range lane gets a scalar second pass over just those lanes. The block
// goes through a local buffer so an in-place call (y == x) still reads the
// original inputs in the second pass.
template <class T, class O, class F>
LUCID_AVX2_CLONES void map1_with_fallback(F f, const T* x, O* y, int64_t lo, int64_t hi) {
  using C = compute_t<T>;
  constexpr int64_t kBlock = 512;
  C buf[kBlock];
  for (int64_t b = lo; b < hi; b += kBlock) {
    int64_t len = hi - b < kBlock ? hi - b : kBlock;
    int any_slow = 0;
    for (int64_t j = 0; j < len; ++j) {
      C v = load<C>(x[b + j]);
      buf[j] = f.fast(v);
      any_slow |= !f.in_fast_range(v);
    }
    if (any_slow) {
      for (int64_t j = 0; j < len; ++j) {
        C v = load<C>(x[b + j]);
        if (!f.in_fast_range(v)) buf[j] = f.exact(v);
      }
    }
    for (int64_t j = 0; j < len; ++j) y[b + j] = store<O>(buf[j]);
  }
}

template <class T, class O, class F>
void unary_contiguous_with_fallback(F f, const T* x, O* y, int64_t n) {
  if (n <= 0) return;
  parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) { map1_with_fallback<T, O>(f, x, y, lo, hi); });
}

template <class T, class O, class F>
LUCID_AVX2_CLONES void map2(F f, const T* __restrict a, const T* __restrict b, O* __restrict y, int64_t lo, int64_t hi) {
  using C = compute_t<T>;
  for (int64_t i = lo; i < hi; ++i) y[i] = store<O>(f(load<C>(a[i]), load<C>(b[i])));
}

template <class T, class O, class F>
LUCID_AVX2_CLONES void map2_scalar_b(F f, const T* __restrict a, compute_t<T> vb, O* __restrict y, int64_t lo, int64_t hi) {
  using C = compute_t<T>;
  for (int64_t i = lo; i < hi; ++i) y[i] = store<O>(f(load<C>(a[i]), vb));
}

template <class T, class O, class F>
LUCID_AVX2_CLONES void map2_scalar_a(F f, compute_t<T> va, const T* __restrict b, O* __restrict y, int64_t lo, int64_t hi) {
  using C = compute_t<T>;
  for (int64_t i = lo; i < hi; ++i) y[i] = store<O>(f(va, load<C>(b[i])));
}

// out = f(a, b) with broadcasting; out is contiguous, a and b any strides.
template <class T, class O, class F>
void binary_loop(F f, const Tensor& a, const Tensor& b, const Tensor& out) {
  using C = compute_t<T>;
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  O* po = out.data<O>();
  int64_t n = out.numel();
  if (n == 0) return;
  bool a_full = a.shape() == out.shape() && a.is_contiguous();
  bool b_full = b.shape() == out.shape() && b.is_contiguous();
  if (a_full && b_full) {
    parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) { map2<T, O>(f, pa, pb, po, lo, hi); });
    return;
  }
  if (a_full && b.numel() == 1) {  // tensor-scalar, the other common case
    C vb = load<C>(pb[0]);
    parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) { map2_scalar_b<T, O>(f, pa, vb, po, lo, hi); });
    return;
  }
  if (b_full && a.numel() == 1) {
    C va = load<C>(pa[0]);
    parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) { map2_scalar_a<T, O>(f, va, pb, po, lo, hi); });
    return;
  }
  StridedLoop<3> loop{out.shape(),
                      {broadcast_strides(a.shape(), a.strides(), out.shape()),
                       broadcast_strides(b.shape(), b.strides(), out.shape()), out.strides()}};
  loop.run([&](auto off, int64_t len, auto st) {
    const T* xa = pa + off[0];
    const T* xb = pb + off[1];
    O* xo = po + off[2];
    // Runs of a broadcast operand against a contiguous one (a per-channel scale over
    // a plane) take the vectorized loops; the same f on the same values.
    if (st[2] == 1 && st[0] == 1 && st[1] == 0) return map2_scalar_b<T, O>(f, xa, load<C>(xb[0]), xo, 0, len);
    if (st[2] == 1 && st[0] == 0 && st[1] == 1) return map2_scalar_a<T, O>(f, load<C>(xa[0]), xb, xo, 0, len);
    if (st[2] == 1 && st[0] == 1 && st[1] == 1) return map2<T, O>(f, xa, xb, xo, 0, len);
    for (int64_t i = 0; i < len; ++i) xo[i] = store<O>(f(load<C>(xa[i * st[0]]), load<C>(xb[i * st[1]])));
  });
}

}  // namespace lucid::cpu
