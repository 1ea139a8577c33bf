// dequantize: integer codes -> float32 / float16 / bfloat16.
// d = q - z exactly in integers (int64 for 32-bit codes); y = fl(float(d) * s).
#include <limits>
#include <type_traits>

#include "core/dispatch.h"
#include "core/errors.h"
#include "cpu/quantize_loop.h"
#include "cpu/quantize_simd.h"

namespace lucid::cpu {

namespace {

// Codes up to 16 bits differ from z by less than 2^31: int32 arithmetic is exact.
template <class Q> using diff_t = std::conditional_t<(sizeof(Q) >= 4), int64_t, int32_t>;

// int64 codes: q - z can leave int64 (q = 2^63 - 1, z < 0), so q is first
// clamped to [INT64_MIN + max(z, 0), INT64_MAX + min(z, 0)], which makes the
// difference saturate instead of wrapping. float(d) is then exactly
// float(q - z) computed without bound: every |q - z| beyond int64 lies within
// 2^31 of +-2^63, where the float spacing is 2^40, so it rounds to +-2^63 just
// as the saturated value does.
template <class Q, class T>
inline T dequantize_value(Q q, float s, int32_t z) {
  diff_t<Q> qd = static_cast<diff_t<Q>>(q);
  if constexpr (sizeof(Q) == 8) {
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
    int64_t lo = kMin + (z > 0 ? z : 0), hi = kMax + (z < 0 ? z : 0);
    qd = qd < lo ? lo : (qd > hi ? hi : qd);
  }
  diff_t<Q> d = qd - static_cast<diff_t<Q>>(z);
  return T(static_cast<float>(d) * s);
}

template <class Q, class T>
LUCID_QUANT_CLONES void dequantize_run(const Q* __restrict q, T* __restrict y, int64_t n, float s, int32_t z) {
  for (int64_t i = 0; i < n; ++i) y[i] = dequantize_value<Q, T>(q[i], s, z);
}

template <class Q, class T>
LUCID_QUANT_CLONES void dequantize_groups(const Q* __restrict q, T* __restrict y, int64_t rows, int64_t len,
                                          const float* __restrict s, const int32_t* __restrict z) {
  for (int64_t r = 0; r < rows; ++r) {
    float sr = s[r];
    int32_t zr = z[r];
    for (int64_t i = 0; i < len; ++i) y[r * len + i] = dequantize_value<Q, T>(q[r * len + i], sr, zr);
  }
}

template <class Q, class T>
LUCID_QUANT_CLONES void dequantize_elem(const Q* __restrict q, T* __restrict y, int64_t n, const float* __restrict s, const int32_t* __restrict z) {
  for (int64_t i = 0; i < n; ++i) y[i] = dequantize_value<Q, T>(q[i], s[i], z[i]);
}

template <class Q, class T>
LUCID_NO_VECTORIZE void dequantize_scalar(const Q* q, T* y, int64_t n, const float* s, const int32_t* z,
                                          int64_t step) {
  for (int64_t i = 0; i < n; ++i) y[i] = dequantize_value<Q, T>(q[i], s[i * step], z[i * step]);
}

template <class F>
void dispatch_dequantize(const Tensor& q, const Tensor& out, F&& f) {
  dispatch(q.dtype(), [&](auto qt) {
    using Q = typename decltype(qt)::type;
    if constexpr (std::is_integral_v<Q> && !std::is_same_v<Q, bool>) {
      dispatch(out.dtype(), [&](auto yt) {
        using T = typename decltype(yt)::type;
        if constexpr (std::is_same_v<T, float> || is_half_v<T>) f(q.data<Q>(), out.data<T>());
        else throw TypeError("internal: dequantize output must be floating");
      });
    } else {
      throw TypeError("internal: dequantize input must be integer codes");
    }
  });
}

}  // namespace

void dequantize(const Tensor& q, const Tensor& out, const QSegments& seg, const float* scale, const int32_t* zp) {
  if (dequantize_simd(q, out, seg, scale, zp, kernels::vquant_best())) return;
  dispatch_dequantize(q, out, [&](const auto* pq, auto* py) {
    for_each_segment(
        seg, true, [&](int64_t i, int64_t len, int64_t p) { dequantize_run(pq + i, py + i, len, scale[p], zp[p]); },
        [&](int64_t i, int64_t len, int64_t p) { dequantize_elem(pq + i, py + i, len, scale + p, zp + p); },
        [&](int64_t i, int64_t rows, int64_t len, int64_t p) {
          dequantize_groups(pq + i, py + i, rows, len, scale + p, zp + p);
        });
  });
}

void dequantize_reference(const Tensor& q, const Tensor& out, const QSegments& seg, const float* scale,
                          const int32_t* zp) {
  if (dequantize_simd(q, out, seg, scale, zp, kernels::vquant_scalar())) return;
  dispatch_dequantize(q, out, [&](const auto* pq, auto* py) {
    for_each_segment(
        seg, false,
        [&](int64_t i, int64_t len, int64_t p) { dequantize_scalar(pq + i, py + i, len, scale + p, zp + p, 0); },
        [&](int64_t i, int64_t len, int64_t p) { dequantize_scalar(pq + i, py + i, len, scale + p, zp + p, 1); });
  });
}

}  // namespace lucid::cpu
