// The float grids (FP8 E4M3FN / E5M2, FP4 E2M1FN): x / scale rounded into the
// format by core/minifloat.h's integer operations, codes as uint8 bit
// patterns; and back, decode(code) * scale. The zero point (0) is added to
// x / scale in float, as ONNX's formula round(x / scale) + zero_point does:
// -0 becomes +0, nothing else changes.
#include <type_traits>

#include "core/dispatch.h"
#include "core/errors.h"
#include "cpu/float_grid_simd.h"
#include "cpu/quantize_loop.h"

namespace lucid::cpu {

namespace {

// Half-precision inputs and outputs: saturate and the format are template
// parameters so the loop body is one straight-line select chain the compiler
// vectorizes. Float32 goes through the explicit-SIMD table (cpu/float_grid_simd.h).
template <class T, bool Sat>
LUCID_QUANT_CLONES void encode_run_t(const T* __restrict x, uint8_t* __restrict q, int64_t n, float s,
                                     minifloat::Format f) {
  for (int64_t i = 0; i < n; ++i)
    q[i] = static_cast<uint8_t>(minifloat::encode_select(minifloat::bits_of(widen(x[i]) / s + 0.0f), f, Sat));
}

template <class T>
void encode_run(const T* x, uint8_t* q, int64_t n, float s, minifloat::Format f, bool saturate) {
  if (saturate) encode_run_t<T, true>(x, q, n, s, f);
  else encode_run_t<T, false>(x, q, n, s, f);
}

template <class T>
LUCID_QUANT_CLONES void encode_elem(const T* __restrict x, uint8_t* __restrict q, int64_t n,
                                    const float* __restrict s, minifloat::Format f, bool saturate) {
  for (int64_t i = 0; i < n; ++i)
    q[i] = static_cast<uint8_t>(minifloat::encode_select(minifloat::bits_of(widen(x[i]) / s[i] + 0.0f), f, saturate));
}

template <class T>
LUCID_QUANT_CLONES void decode_run(const uint8_t* __restrict q, T* __restrict y, int64_t n, const float* __restrict s,
                                   int64_t step, minifloat::Format f) {
  for (int64_t i = 0; i < n; ++i) y[i] = T(minifloat::decode(q[i], f) * s[i * step]);
}

}  // namespace

void quantize_minifloat(const Tensor& x, const Tensor& out, const QSegments& seg, const float* scale,
                        const minifloat::Format& f, bool saturate) {
  check<TypeError>(out.dtype() == DType::UInt8, "internal: float-grid codes are uint8");
  dispatch(x.dtype(), [&](auto xt) {
    using T = typename decltype(xt)::type;
    if constexpr (std::is_same_v<T, float>) {
      const fgrid::Kernels& k = fgrid::best();
      const fgrid::Encoding e = fgrid::grid_encoding(f, saturate);
      const float* px = x.data<float>();
      uint8_t* pq = out.data<uint8_t>();
      for_each_segment(
          seg, true,
          [&](int64_t i, int64_t len, int64_t p) { k.encode(static_cast<size_t>(len), px + i, pq + i, scale + p, false, e); },
          [&](int64_t i, int64_t len, int64_t p) { k.encode(static_cast<size_t>(len), px + i, pq + i, scale + p, true, e); });
    } else if constexpr (is_half_v<T>) {
      const T* px = x.data<T>();
      uint8_t* pq = out.data<uint8_t>();
      for_each_segment(
          seg, true, [&](int64_t i, int64_t len, int64_t p) { encode_run(px + i, pq + i, len, scale[p], f, saturate); },
          [&](int64_t i, int64_t len, int64_t p) { encode_elem(px + i, pq + i, len, scale + p, f, saturate); });
    } else {
      throw TypeError("internal: quantize input must be floating");
    }
  });
}

void dequantize_minifloat(const Tensor& q, const Tensor& out, const QSegments& seg, const float* scale,
                          const minifloat::Format& f) {
  check<TypeError>(q.dtype() == DType::UInt8, "internal: float-grid codes are uint8");
  dispatch(out.dtype(), [&](auto yt) {
    using T = typename decltype(yt)::type;
    if constexpr (std::is_same_v<T, float>) {
      const fgrid::Kernels& k = fgrid::best();
      const uint8_t* pq = q.data<uint8_t>();
      float* py = out.data<float>();
      // Non-temporal stores when the output is larger than a last-level cache
      // holds: it is evicted before anyone reads it, and they save reading each
      // output line before it is written.
      const bool stream = seg.n * 5 >= (int64_t{32} << 20);
      for_each_segment(
          seg, true,
          [&](int64_t i, int64_t len, int64_t p) { k.decode(static_cast<size_t>(len), pq + i, py + i, scale + p, false, f, stream); },
          [&](int64_t i, int64_t len, int64_t p) { k.decode(static_cast<size_t>(len), pq + i, py + i, scale + p, true, f, stream); });
    } else if constexpr (is_half_v<T>) {
      const uint8_t* pq = q.data<uint8_t>();
      T* py = out.data<T>();
      for_each_segment(
          seg, true, [&](int64_t i, int64_t len, int64_t p) { decode_run(pq + i, py + i, len, scale + p, 0, f); },
          [&](int64_t i, int64_t len, int64_t p) { decode_run(pq + i, py + i, len, scale + p, 1, f); });
    } else {
      throw TypeError("internal: dequantize output must be floating");
    }
  });
}

void fake_quantize_minifloat(const Tensor& x, const Tensor& y, const Tensor& mask, const QSegments& seg,
                             const float* scale, const minifloat::Format& f, bool saturate) {
  check<TypeError>(x.dtype() == DType::Float32 && y.dtype() == DType::Float32 && mask.dtype() == DType::Bool,
                   "internal: the fused float-grid fake_quantize is float32 in and out with a bool mask");
  const fgrid::Kernels& k = fgrid::best();
  const fgrid::Encoding e = fgrid::grid_encoding(f, saturate);
  const float* px = x.data<float>();
  float* py = y.data<float>();
  uint8_t* pm = static_cast<uint8_t*>(mask.raw_data());
  for_each_segment(
      seg, true,
      [&](int64_t i, int64_t len, int64_t p) { k.fake(static_cast<size_t>(len), px + i, py + i, pm + i, scale + p, false, e); },
      [&](int64_t i, int64_t len, int64_t p) { k.fake(static_cast<size_t>(len), px + i, py + i, pm + i, scale + p, true, e); });
}

}  // namespace lucid::cpu
