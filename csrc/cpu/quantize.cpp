// quantize: float32 / float16 / bfloat16 -> int8 / uint8 / int32 codes.
#include <cstring>
#include <type_traits>

#include "core/dispatch.h"
#include "core/errors.h"
#include "cpu/kernels/prefetch.h"
#include "cpu/quantize_loop.h"
#include "cpu/quantize_simd.h"

namespace lucid::cpu {

namespace {

// One (scale, zero_point) for the whole run: per-tensor, per-channel rows and
// per-group runs all land here. Blocks of 256 elements, each first prefetching
// the input 4 KiB ahead (cpu/kernels/prefetch.h): qint16 codes, which no SIMD
// table holds, went from 0.84-0.89x to 0.97-0.98x numpy's astype bandwidth at
// 16M elements on an Intel Xeon.
template <class T, class Q>
LUCID_QUANT_CLONES void quantize_run(const T* __restrict x, Q* __restrict q, int64_t n, float s, int32_t z, float lo, float hi) {
  constexpr int64_t kBlock = 256;
  int64_t i0 = 0;
  for (; i0 + kBlock <= n; i0 += kBlock) {
    kernels::prefetch_ahead(x + i0, kBlock * sizeof(T));
    for (int64_t i = i0; i < i0 + kBlock; ++i) q[i] = static_cast<Q>(quantize_code(widen(x[i]), s, z, lo, hi));
  }
  for (int64_t i = i0; i < n; ++i) q[i] = static_cast<Q>(quantize_code(widen(x[i]), s, z, lo, hi));
}

// Consecutive runs of `len` elements, run k using parameter k: per-group
// quantization along the last axis, in one call. The common group sizes get
// a compile-time length (G > 0) so the inner loop has no per-group prologue
// or remainder; G = 0 takes the length at run time.
template <int G, class T, class Q>
LUCID_QUANT_CLONES void quantize_groups(const T* __restrict x, Q* __restrict q, int64_t rows, int64_t len,
                                        const float* __restrict s, const int32_t* __restrict z, float lo, float hi) {
  const int64_t n = G > 0 ? G : len;
  for (int64_t r = 0; r < rows; ++r) {
    float sr = s[r];
    int32_t zr = z[r];
    const T* xr = x + r * n;
    Q* qr = q + r * n;
    for (int64_t i = 0; i < n; ++i) qr[i] = static_cast<Q>(quantize_code(widen(xr[i]), sr, zr, lo, hi));
  }
}

// A parameter per element: per-channel along the last axis.
template <class T, class Q>
LUCID_QUANT_CLONES void quantize_elem(const T* __restrict x, Q* __restrict q, int64_t n, const float* __restrict s, const int32_t* __restrict z, float lo,
                                      float hi) {
  for (int64_t i = 0; i < n; ++i) q[i] = static_cast<Q>(quantize_code(widen(x[i]), s[i], z[i], lo, hi));
}

template <class T, class Q>
LUCID_NO_VECTORIZE void quantize_scalar(const T* x, Q* q, int64_t n, const float* s, const int32_t* z,
                                        int64_t s_step, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) {
    q[i] = static_cast<Q>(quantize_code(widen(x[i]), s[i * s_step], z[i * s_step], lo, hi));
  }
}

template <class F>
void dispatch_quantize(const Tensor& x, const Tensor& out, F&& f) {
  dispatch(x.dtype(), [&](auto xt) {
    using T = typename decltype(xt)::type;
    if constexpr (std::is_same_v<T, float> || is_half_v<T>) {
      dispatch(out.dtype(), [&](auto qt) {
        using Q = typename decltype(qt)::type;
        if constexpr (std::is_same_v<Q, int8_t> || std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int16_t> ||
                      std::is_same_v<Q, int32_t>)
          f(x.data<T>(), out.data<Q>());
        else
          throw TypeError("internal: quantize storage must be int8, uint8, int16 or int32");
      });
    } else {
      throw TypeError("internal: quantize input must be floating");
    }
  });
}

}  // namespace

LUCID_QUANT_CLONES void int32_range(const int32_t* v, int64_t n, int32_t& lo, int32_t& hi) {
  int32_t a = v[0], b = v[0];
  for (int64_t i = 0; i < n; ++i) {
    a = v[i] < a ? v[i] : a;
    b = v[i] > b ? v[i] : b;
  }
  lo = a, hi = b;
}

LUCID_QUANT_CLONES void float_bits_range(const float* v, int64_t n, int32_t& lo, int32_t& hi) {
  int32_t a, b;
  std::memcpy(&a, v, 4);
  b = a;
  for (int64_t i = 0; i < n; ++i) {
    int32_t u;
    std::memcpy(&u, v + i, 4);
    a = u < a ? u : a;
    b = u > b ? u : b;
  }
  lo = a, hi = b;
}

void quantize(const Tensor& x, const Tensor& out, const QSegments& seg, const float* scale, const int32_t* zp,
              QBounds b) {
  if (quantize_simd(x, out, seg, scale, zp, b, kernels::vquant_best())) return;
  dispatch_quantize(x, out, [&](const auto* px, auto* pq) {
    for_each_segment(
        seg, true,
        [&](int64_t i, int64_t len, int64_t p) {
          quantize_run(px + i, pq + i, len, scale[p], zp[p], b.lo, b.hi);
        },
        [&](int64_t i, int64_t len, int64_t p) { quantize_elem(px + i, pq + i, len, scale + p, zp + p, b.lo, b.hi); },
        [&](int64_t i, int64_t rows, int64_t len, int64_t p) {
          with_group_length(len, [&](auto g) {
            quantize_groups<decltype(g)::value>(px + i, pq + i, rows, len, scale + p, zp + p, b.lo, b.hi);
          });
        });
  });
}

void quantize_reference(const Tensor& x, const Tensor& out, const QSegments& seg, const float* scale,
                        const int32_t* zp, QBounds b) {
  if (quantize_simd(x, out, seg, scale, zp, b, kernels::vquant_scalar())) return;
  dispatch_quantize(x, out, [&](const auto* px, auto* pq) {
    for_each_segment(
        seg, false,
        [&](int64_t i, int64_t len, int64_t p) { quantize_scalar(px + i, pq + i, len, scale + p, zp + p, 0, b.lo, b.hi); },
        [&](int64_t i, int64_t len, int64_t p) { quantize_scalar(px + i, pq + i, len, scale + p, zp + p, 1, b.lo, b.hi); });
  });
}

}  // namespace lucid::cpu
