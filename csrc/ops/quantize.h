// The quantize family, lucid.quantization's primitives: quantize, dequantize
// and fake_quantize. The one place that validates their arguments (so both
// streams raise the same words) and turns them into the canonical parameters
// the cpu:: and gpu:: kernels take. Formulas: docs/numerics.md.
#pragma once
#include <optional>
#include <string>
#include <utility>

#include "core/tensor.h"

namespace lucid::ops {

// Where the parameters apply: per-tensor (neither), per-channel (ch_axis) or
// per-group (group_size > 0 along `axis`).
struct QAxes {
  std::optional<int64_t> ch_axis;
  int64_t group_size = 0;
  int64_t axis = -1;
};

// Codes of x on the grid `qdtype`: clamp(round(x / scale) + zero_point).
// `qdtype` is a grid name: qint8, quint8, qint4, quint4, qint32.
// `reference` runs the scalar CPU kernel (tests compare it with the fast one).
Tensor quantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point, const std::string& qdtype,
                const QAxes& axes, bool reference = false);
// Floats (q - zero_point) * scale in `dtype`.
Tensor dequantize(const Tensor& q, const Tensor& scale, const Tensor& zero_point, const QAxes& axes, DType dtype,
                  bool reference = false);
// (y, mask): y = dequantize(quantize(x)) in x's dtype, mask the bool
// straight-through (STE) pass-through mask.
std::pair<Tensor, Tensor> fake_quantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point,
                                        int64_t quant_min, int64_t quant_max, const QAxes& axes,
                                        bool reference = false);
// Per-tensor forms with the scale and zero point as numbers: the same as
// passing 0-d float32 / int64 tensors of them (same values, checks and
// messages), without making those tensors (lucid.quantization's fast path).
// quantize, per tensor.
Tensor quantize(const Tensor& x, double scale, int64_t zero_point, const std::string& qdtype);
// dequantize, per tensor.
Tensor dequantize(const Tensor& q, double scale, int64_t zero_point, DType dtype);
// fake_quantize, per tensor.
std::pair<Tensor, Tensor> fake_quantize(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                        int64_t quant_max);
// Float grids ("float8_e4m3fn", "float8_e5m2", "float4_e2m1fn"): uint8 codes
// (bit patterns; FP4 in the low nibble) of x / scale rounded to nearest even
// into the format. saturate: out-of-range values clamp to +-max finite; else
// they become infinity (E5M2) or NaN (E4M3FN; FP4 has neither and saturates).
// zero_point must be 0 (a number or a tensor of zeros).
Tensor quantize_float(const Tensor& x, const Tensor& scale, const Tensor& zero_point, const std::string& qdtype,
                      const QAxes& axes, bool saturate);
// Floats decode(code) * scale in `dtype` for uint8 codes of float grid `qdtype`.
Tensor dequantize_float(const Tensor& codes, const Tensor& scale, const Tensor& zero_point, const std::string& qdtype,
                        const QAxes& axes, DType dtype);
// fake_quantize onto a float grid in one pass on the CPU stream (float32 x):
// (y, mask) with y = dequantize_float(quantize_float(x)) and mask = |x / scale|
// <= the largest finite value. Other devices and dtypes compose the two ops.
std::pair<Tensor, Tensor> fake_quantize_float(const Tensor& x, const Tensor& scale, const Tensor& zero_point,
                                              const std::string& qdtype, const QAxes& axes, bool saturate);
// fake_quantize's input gradient dx = where(mask, dy, 0), fused.
Tensor fake_quantize_backward(const Tensor& dy, const Tensor& mask);

}  // namespace lucid::ops
