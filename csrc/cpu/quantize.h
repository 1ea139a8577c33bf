// CPU-stream kernels of the quantize family (docs/numerics.md is the
// contract), and the parameter layouts and grid bounds every quantization
// kernel shares. Each kernel reads its input once and writes its output once;
// parameters arrive as host arrays already validated by ops/quantize.cpp.
#pragma once
#include <cstdint>

#include "core/minifloat.h"
#include "core/tensor.h"

namespace lucid::cpu {

// How a contiguous tensor splits into runs that share quantization
// parameters. Row r covers elements [r*row_len, (r+1)*row_len). Its
// parameters start at index param_index(r); when per_element is set, element
// j of the row uses parameter param_index(r) + j (per-channel along the last
// axis, per-group with trailing dimensions), otherwise the whole row shares
// one (scale, zero_point) pair (per-tensor, per-channel, per-group runs).
struct QSegments {
  int64_t n = 0;
  int64_t row_len = 1;
  int64_t period = 1, group = 1, group_stride = 0, param_mul = 1;
  bool per_element = false;
  int64_t param_index(int64_t r) const { return ((r / period) * group_stride + (r % period) / group) * param_mul; }

  static QSegments per_tensor(int64_t n);
  // Tensor viewed as (outer, len, inner); one parameter per index along len.
  static QSegments per_channel(int64_t outer, int64_t len, int64_t inner);
  // (outer, len, inner) with runs of `group` along len; parameters shaped
  // (outer, len / group, inner), row-major.
  static QSegments per_group(int64_t outer, int64_t len, int64_t inner, int64_t group);
};

// Float bounds of an integer grid: the integral floats nearest to qmin / qmax
// from inside (exact for every grid narrower than 2^24; qint32's 2^31-1
// becomes 2147483520, the largest float below 2^31, so every cast is defined).
struct QBounds {
  float lo, hi;
  static QBounds of(int64_t qmin, int64_t qmax);
};

// The smallest and largest of n >= 1 int32 values, and of the bit patterns
// of n floats read as int32 (a float is finite and >= 2^-126 exactly when its
// bits lie in [0x00800000, 0x7f800000)): ops/ checks per-channel and
// per-group parameters with one vectorized pass each.
void int32_range(const int32_t* v, int64_t n, int32_t& lo, int32_t& hi);
void float_bits_range(const float* v, int64_t n, int32_t& lo, int32_t& hi);

// quantize: x (float32/float16/bfloat16, contiguous) -> out (int8/uint8/int32).
void quantize(const Tensor& x, const Tensor& out, const QSegments& seg, const float* scale, const int32_t* zp,
              QBounds b);
// dequantize: q (any integer dtype, contiguous) -> out (float32/float16/bfloat16).
void dequantize(const Tensor& q, const Tensor& out, const QSegments& seg, const float* scale, const int32_t* zp);
// fake_quantize: y = dequantize(quantize(x)) and mask = STE pass-through
// (pre-clamp value inside [qmin, qmax]); y has x's dtype, mask is bool.
void fake_quantize(const Tensor& x, const Tensor& y, const Tensor& mask, const QSegments& seg, const float* scale,
                   const int32_t* zp, int64_t qmin, int64_t qmax);
// dx = mask ? dy : 0, one pass.
void masked_grad(const Tensor& dy, const Tensor& mask, const Tensor& dx);

// Float grids: out (uint8) = minifloat::encode(bits(x / scale), f, saturate);
// dequantize_minifloat: out = decode(q, f) * scale in float32, then out's dtype.
void quantize_minifloat(const Tensor& x, const Tensor& out, const QSegments& seg, const float* scale,
                        const minifloat::Format& f, bool saturate);
void dequantize_minifloat(const Tensor& q, const Tensor& out, const QSegments& seg, const float* scale,
                          const minifloat::Format& f);
// fake_quantize onto a float grid, float32 in and out, one pass: y =
// decode(encode(x / scale)) * scale, mask (bool) = |x / scale| <= max finite.
void fake_quantize_minifloat(const Tensor& x, const Tensor& y, const Tensor& mask, const QSegments& seg,
                             const float* scale, const minifloat::Format& f, bool saturate);

// Scalar reference paths (no vectorization, no threads): the tests compare
// the fast kernels above against them bit for bit.
void quantize_reference(const Tensor& x, const Tensor& out, const QSegments& seg, const float* scale,
                        const int32_t* zp, QBounds b);
void dequantize_reference(const Tensor& q, const Tensor& out, const QSegments& seg, const float* scale,
                          const int32_t* zp);
void fake_quantize_reference(const Tensor& x, const Tensor& y, const Tensor& mask, const QSegments& seg,
                             const float* scale, const int32_t* zp, int64_t qmin, int64_t qmax);

}  // namespace lucid::cpu
