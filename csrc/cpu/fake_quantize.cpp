// fake_quantize forward (values + STE mask in one pass) and its backward.
#include <bit>
#include <limits>
#include <type_traits>

#include "core/dispatch.h"
#include "core/errors.h"
#include "cpu/quantize_loop.h"
#include "cpu/quantize_simd.h"

namespace lucid::cpu {

namespace {

// y = dequantize(quantize(x)) with the mask of the straight-through
// estimator: pass where the pre-clamp value v lies in [lo, hi] (NaN and
// +-inf fail both comparisons). d = q - z is formed in integers exactly as
// dequantize does: int32 when the grid is narrower than 2^31 (Wide = false),
// int64 otherwise. A NaN input gives the canonical quiet NaN 0x7fc00000 (so
// no NaN payload can differ between streams); it is OR-ed in as bits because
// a second float select keeps GCC from vectorizing the loop.
template <bool Wide>
inline float fake_quantize_value(float x, float s, int32_t z, float lo, float hi, uint8_t& pass) {
  using D = std::conditional_t<Wide, int64_t, int32_t>;
  float zf = static_cast<float>(z);
  float t = x / s;
  float v = std::nearbyint(t) + zf;
  pass = static_cast<uint8_t>(v >= lo) & static_cast<uint8_t>(v <= hi);
  float c = v < lo ? lo : v;
  c = c > hi ? hi : c;
  // The NaN lane casts lo (always in range) and its d is masked to 0, so
  // y = +0 and the OR below yields exactly 0x7fc00000. (Selecting float(z)
  // instead gave d != 0 whenever float(z) != z, i.e. |z| >= 2^24.)
  c = t != t ? lo : c;
  D d = static_cast<D>(static_cast<int32_t>(c)) - static_cast<D>(z);
  d &= static_cast<D>(static_cast<D>(t != t) - 1);
  float y = static_cast<float>(d) * s;
  uint32_t nan_bits = (0u - static_cast<uint32_t>(t != t)) & 0x7fc00000u;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(y) | nan_bits);
}

template <bool Wide, class T>
LUCID_QUANT_CLONES void fq_run(const T* __restrict x, T* __restrict y, uint8_t* __restrict m, int64_t n, float s, int32_t z, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) {
    uint8_t pass;
    y[i] = T(fake_quantize_value<Wide>(widen(x[i]), s, z, lo, hi, pass));
    m[i] = pass;
  }
}

template <bool Wide, class T>
LUCID_QUANT_CLONES void fq_elem(const T* __restrict x, T* __restrict y, uint8_t* __restrict m, int64_t n, const float* __restrict s, const int32_t* __restrict z, float lo,
                                float hi) {
  for (int64_t i = 0; i < n; ++i) {
    uint8_t pass;
    y[i] = T(fake_quantize_value<Wide>(widen(x[i]), s[i], z[i], lo, hi, pass));
    m[i] = pass;
  }
}

template <bool Wide, class T>
LUCID_QUANT_CLONES void fq_groups(const T* __restrict x, T* __restrict y, uint8_t* __restrict m, int64_t rows,
                                  int64_t len, const float* __restrict s, const int32_t* __restrict z, float lo,
                                  float hi) {
  for (int64_t r = 0; r < rows; ++r) {
    float sr = s[r];
    int32_t zr = z[r];
    for (int64_t i = 0; i < len; ++i) {
      uint8_t pass;
      y[r * len + i] = T(fake_quantize_value<Wide>(widen(x[r * len + i]), sr, zr, lo, hi, pass));
      m[r * len + i] = pass;
    }
  }
}

template <bool Wide, class T>
LUCID_NO_VECTORIZE void fq_scalar(const T* x, T* y, uint8_t* m, int64_t n, const float* s, const int32_t* z,
                                  int64_t step, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) {
    uint8_t pass;
    y[i] = T(fake_quantize_value<Wide>(widen(x[i]), s[i * step], z[i * step], lo, hi, pass));
    m[i] = pass;
  }
}

template <class F>
void dispatch_float(DType dt, F&& f) {
  dispatch(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || is_half_v<T>) f(tag);
    else throw TypeError("internal: fake_quantize expects a floating tensor");
  });
}

template <bool Wide>
void fake_quantize_impl(const Tensor& x, const Tensor& y, const Tensor& mask, const QSegments& seg,
                        const float* scale, const int32_t* zp, QBounds b, bool reference) {
  dispatch_float(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    uint8_t* pm = static_cast<uint8_t*>(mask.raw_data());
    if (reference) {
      for_each_segment(
          seg, false,
          [&](int64_t i, int64_t n, int64_t p) { fq_scalar<Wide>(px + i, py + i, pm + i, n, scale + p, zp + p, 0, b.lo, b.hi); },
          [&](int64_t i, int64_t n, int64_t p) { fq_scalar<Wide>(px + i, py + i, pm + i, n, scale + p, zp + p, 1, b.lo, b.hi); });
    } else {
      for_each_segment(
          seg, true,
          [&](int64_t i, int64_t n, int64_t p) { fq_run<Wide>(px + i, py + i, pm + i, n, scale[p], zp[p], b.lo, b.hi); },
          [&](int64_t i, int64_t n, int64_t p) { fq_elem<Wide>(px + i, py + i, pm + i, n, scale + p, zp + p, b.lo, b.hi); },
          [&](int64_t i, int64_t rows, int64_t n, int64_t p) {
            fq_groups<Wide>(px + i, py + i, pm + i, rows, n, scale + p, zp + p, b.lo, b.hi);
          });
    }
  });
}

void fake_quantize_any(const Tensor& x, const Tensor& y, const Tensor& mask, const QSegments& seg,
                       const float* scale, const int32_t* zp, int64_t qmin, int64_t qmax, bool reference) {
  QBounds b = QBounds::of(qmin, qmax);
  if (qmax - qmin <= std::numeric_limits<int32_t>::max())
    fake_quantize_impl<false>(x, y, mask, seg, scale, zp, b, reference);
  else
    fake_quantize_impl<true>(x, y, mask, seg, scale, zp, b, reference);
}

// dx = mask ? dy : +0 on the raw bits (U is T's width as an unsigned
// integer), which vectorizes for every float type.
template <class U>
LUCID_QUANT_CLONES void masked_run(const U* __restrict dy, const uint8_t* __restrict m, U* __restrict dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = static_cast<U>(dy[i] & static_cast<U>(0u - static_cast<uint32_t>(m[i] & 1u)));
}

}  // namespace

void fake_quantize(const Tensor& x, const Tensor& y, const Tensor& mask, const QSegments& seg, const float* scale,
                   const int32_t* zp, int64_t qmin, int64_t qmax) {
  if (fake_quantize_simd(x, y, mask, seg, scale, zp, qmin, qmax, kernels::vquant_best())) return;
  fake_quantize_any(x, y, mask, seg, scale, zp, qmin, qmax, false);
}

void fake_quantize_reference(const Tensor& x, const Tensor& y, const Tensor& mask, const QSegments& seg,
                             const float* scale, const int32_t* zp, int64_t qmin, int64_t qmax) {
  if (fake_quantize_simd(x, y, mask, seg, scale, zp, qmin, qmax, kernels::vquant_scalar())) return;
  fake_quantize_any(x, y, mask, seg, scale, zp, qmin, qmax, true);
}

void masked_grad(const Tensor& dy, const Tensor& mask, const Tensor& dx) {
  if (masked_grad_simd(dy, mask, dx)) return;
  const uint8_t* pm = static_cast<const uint8_t*>(mask.raw_data());
  auto run = [&](auto* pdy, auto* pdx) {
    parallel_for(dx.numel(), kElementwiseGrain,
                 [&](int64_t lo, int64_t hi) { masked_run(pdy + lo, pm + lo, pdx + lo, hi - lo); });
  };
  if (itemsize(dy.dtype()) == 4) run(static_cast<const uint32_t*>(dy.raw_data()), static_cast<uint32_t*>(dx.raw_data()));
  else run(static_cast<const uint16_t*>(dy.raw_data()), static_cast<uint16_t*>(dx.raw_data()));
}

}  // namespace lucid::cpu
