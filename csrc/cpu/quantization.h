// CPU-stream quantization kernels (docs/numerics.md is the contract). Every
// kernel here reads its input once and writes its output once; parameters
// arrive as host arrays already validated by ops/quantization.cpp.
#pragma once
#include <cstdint>
#include <memory>

#include "core/tensor.h"
#include "core/window2d.h"

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

// Scalar reference paths (no vectorization, no threads): the tests compare
// the fast kernels above against them bit for bit.
void quantize_reference(const Tensor& x, const Tensor& out, const QSegments& seg, const float* scale,
                        const int32_t* zp, QBounds b);
void dequantize_reference(const Tensor& q, const Tensor& out, const QSegments& seg, const float* scale,
                          const int32_t* zp);
void fake_quantize_reference(const Tensor& x, const Tensor& y, const Tensor& mask, const QSegments& seg,
                             const float* scale, const int32_t* zp, int64_t qmin, int64_t qmax);

// int4 packing along the middle axis of a contiguous (outer, len, inner)
// view: out is (outer, ceil(len/2), inner) uint8, low nibble = even index.
void pack_int4(const Tensor& codes, const Tensor& out, int64_t outer, int64_t len, int64_t inner);
void unpack_int4(const Tensor& packed, const Tensor& out, int64_t outer, int64_t len, int64_t inner);

// Integer matrix product with the fused epilogue of docs/numerics.md, on the
// int8 GEMM kernels of cpu/kernels (the engine lucid.backends.quantized.engine
// selects): acc[m, n] = sum_k (x[m,k] - zx) * (w[n,k] - zw[n]) + bias[n]
// (exact int32; bias may be null), then out = fl(float(acc) * scale[n]) when
// out is float32, else the requantized codes
// clamp(fl(rint(fl(float(acc) * scale[n])) + zy), lo, hi) in out's integer
// dtype (scale holds the multipliers M[n]). x: (M, K) uint8/int8, w: (N, K)
// int8, out: (M, N), all contiguous.
// When `cache` is given, w's packed panels are taken from it (packed on the
// first call per engine kernel) instead of being packed for this call.
struct QWeightCache;
std::shared_ptr<QWeightCache> make_qweight_cache();
void qmatmul(const Tensor& x, int32_t zx, const Tensor& w, const int32_t* zw, const int32_t* bias,
             const float* scale, int32_t zy, QBounds b, const Tensor& out, QWeightCache* cache = nullptr);

// Integer 2-D convolution through the same GEMM: per image and group, an
// integer im2col of x (N, C, H, W) whose padding holds zx, the product with
// w (O, C / groups, kh, kw) and the epilogue above; out (N, O, oh, ow).
void qconv2d(const Tensor& x, int32_t zx, const Tensor& w, const int32_t* zw, const int32_t* bias,
             const float* scale, int32_t zy, QBounds b, const Window2d& win, int64_t groups, const Tensor& out);

}  // namespace lucid::cpu
