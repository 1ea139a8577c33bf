// lucid.quantization primitives: the one place that validates their
// arguments (so both streams raise the same words) and turns them into the
// canonical parameters the cpu:: and gpu:: kernels take. Formulas:
// docs/numerics.md.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "core/tensor.h"
#include "cpu/quantization.h"

namespace lucid::ops {

// Where the parameters apply: per-tensor (neither), per-channel (ch_axis) or
// per-group (group_size > 0 along `axis`).
struct QAxes {
  std::optional<int64_t> ch_axis;
  int64_t group_size = 0;
  int64_t axis = -1;
};

// `qdtype` is a grid name: qint8, quint8, qint4, quint4, qint32.
// `reference` runs the scalar CPU kernel (tests compare it with the fast one).
Tensor quantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point, const std::string& qdtype,
                const QAxes& axes, bool reference = false);
Tensor dequantize(const Tensor& q, const Tensor& scale, const Tensor& zero_point, const QAxes& axes, DType dtype,
                  bool reference = false);
// Returns (y, mask): y = dequantize(quantize(x)) in x's dtype, mask the bool
// STE pass-through mask.
std::pair<Tensor, Tensor> fake_quantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point,
                                        int64_t quant_min, int64_t quant_max, const QAxes& axes,
                                        bool reference = false);
// Per-tensor forms with the scale and zero point as numbers: the same as
// passing 0-d float32 / int64 tensors of them (same values, checks and
// messages), without making those tensors (lucid.quantization's fast path).
Tensor quantize(const Tensor& x, double scale, int64_t zero_point, const std::string& qdtype);
Tensor dequantize(const Tensor& q, double scale, int64_t zero_point, DType dtype);
std::pair<Tensor, Tensor> fake_quantize(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                        int64_t quant_max);
// dx = where(mask, dy, 0), fused.
Tensor fake_quantize_backward(const Tensor& dy, const Tensor& mask);

Tensor pack_int4(const Tensor& codes, int64_t axis);
Tensor unpack_int4(const Tensor& packed, int64_t length, bool is_signed, int64_t axis);

// A qmatmul weight prepared once for repeated calls (as a quantized Linear
// would): a private copy of the int8 codes (N, K), so later writes to the
// caller's tensor change neither stream, and on the CPU stream the packed
// panels of each GEMM engine used, built on first use.
struct QPackedWeight {
  Tensor wq;
  std::shared_ptr<cpu::QWeightCache> cache;  // null for GPU tensors
};
QPackedWeight qmatmul_prepack(const Tensor& wq);

// Integer matmul; float32 output when out_scale is undefined, otherwise codes
// of `out_qdtype`. `packed` (optional) supplies wq's cached panels.
Tensor qmatmul(const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq, const Tensor& w_scale,
               const Tensor& w_zp, const Tensor& bias, const Tensor& out_scale, const Tensor& out_zp,
               const std::string& out_qdtype, cpu::QWeightCache* packed = nullptr);

// Integer 2-D convolution (docs/numerics.md, "Quantized convolution"): xq
// (N, C, H, W) codes padded with x_zp, wq (O, C / groups, kh, kw) int8,
// symmetric padding (ph, pw); float32 output when out_scale is undefined,
// otherwise codes of `out_qdtype`. Output (N, O, oh, ow).
Tensor qconv2d(const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq, const Tensor& w_scale,
               const Tensor& w_zp, const Tensor& bias, const std::vector<int64_t>& stride,
               const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups,
               const Tensor& out_scale, const Tensor& out_zp, const std::string& out_qdtype);

}  // namespace lucid::ops
