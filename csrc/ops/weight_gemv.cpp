#include "ops/weight_gemv.h"

#include <cmath>
#include <optional>

#include "core/errors.h"
#include "cpu/weight_gemv.h"
#include "ops/copy.h"
#include "ops/group_quant.h"
#include "ops/linear.h"
#include "ops/quantize.h"
#include "ops/shape.h"

namespace lucid::ops {

namespace {

std::string arg(const char* fn, const char* name) { return std::string(fn) + "(): argument '" + name + "'"; }

Tensor host_f32(const Tensor& t) {
  Tensor h = t.device() == Device::CPU ? t : to_device(t, Device::CPU);
  return contiguous(h.dtype() == DType::Float32 ? h : astype(h, DType::Float32));
}

// x's K and row count M; the activation and bias checks shared by both ops.
struct Rows {
  int64_t M = 1, K = 0;
};

Rows check_x(const char* fn, const Tensor& x) {
  check<TypeError>(x.dtype() == DType::Float32, arg(fn, "x") + " must be float32, got " + dtype_name(x.dtype()));
  check(x.ndim() >= 1, arg(fn, "x") + " must have shape (..., K), got a 0-d tensor");
  Rows r;
  r.K = x.shape().back();
  for (int i = 0; i + 1 < x.ndim(); ++i) r.M *= x.size(i);
  return r;
}

Tensor check_bias(const char* fn, const Tensor& bias, int64_t N) {
  if (!bias.defined()) return Tensor();
  check<TypeError>(is_floating(bias.dtype()), arg(fn, "bias") + " must be a floating tensor, got " +
                                                  dtype_name(bias.dtype()));
  check(bias.ndim() == 1 && bias.size(0) == N,
        arg(fn, "bias") + " must have shape (" + std::to_string(N) + ",), got " + shape_str(bias.shape()));
  return bias.dtype() == DType::Float32 ? bias : astype(bias, DType::Float32);
}

std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

// The CPU kernel's product for M <= kWeightGemvRows rows.
Tensor gemv(kernels::QfwFormat f, const Tensor& x, const Rows& r, const Tensor& codes, int64_t N, const float* s,
            int64_t s_stride, const Tensor& scales, const Tensor& bias, bool reference) {
  Tensor xc = contiguous(reshape(x, {r.M, r.K}));
  Tensor wc = contiguous(codes);
  Tensor sc = scales.defined() ? contiguous(scales) : Tensor();
  Tensor bc = bias.defined() ? contiguous(bias) : Tensor();
  Tensor out = Tensor::empty_cpu({r.M, N}, DType::Float32);
  if (r.M > 0 && N > 0)
    cpu::qfw_linear(f, xc.data<float>(), r.M, r.K, static_cast<const uint8_t*>(wc.raw_data()), N, s, s_stride,
                    sc.defined() ? sc.data<uint8_t>() : nullptr, 0, nullptr, bc.defined() ? bc.data<float>() : nullptr,
                    out.data<float>(), reference);
  Shape out_shape = x.shape();
  out_shape.back() = N;
  return reshape(out, out_shape);
}

}  // namespace

Tensor float8_weight_linear(const Tensor& x, const Tensor& codes, const Tensor& scale, const std::string& qdtype,
                            const Tensor& bias, bool reference) {
  const char* fn = "float8_weight_linear";
  common_device(fn, {&x, &codes, &scale});
  if (bias.defined()) common_device(fn, {&x, &bias});
  kernels::QfwFormat f;
  if (qdtype == "float8_e4m3fn") f = kernels::QfwFormat::E4M3Row;
  else if (qdtype == "float8_e5m2") f = kernels::QfwFormat::E5M2Row;
  else throw TypeError(arg(fn, "qdtype") + " must be 'float8_e4m3fn' or 'float8_e5m2', got '" + qdtype + "'");
  const Rows r = check_x(fn, x);
  check<TypeError>(codes.dtype() == DType::UInt8, arg(fn, "codes") + " must be uint8 (the codes' bit patterns), got " +
                                                      dtype_name(codes.dtype()));
  check(codes.ndim() == 2, arg(fn, "codes") + " must have shape (N, K), got " + shape_str(codes.shape()));
  const int64_t N = codes.size(0);
  check(codes.size(1) == r.K, std::string(fn) + "(): shapes do not match: 'x' " + shape_str(x.shape()) +
                                  " has K = " + std::to_string(r.K) + " but 'codes' has shape " +
                                  shape_str(codes.shape()) + "; expected (N, " + std::to_string(r.K) + ")");
  check<TypeError>(is_floating(scale.dtype()), arg(fn, "scale") + " must be a floating tensor, got " +
                                                   dtype_name(scale.dtype()));
  const bool per_row = scale.ndim() == 1 && scale.size(0) == N && N != 1;
  check((scale.numel() == 1 && scale.ndim() <= 1) || per_row,
        arg(fn, "scale") + " must hold one value (shape () or (1,)) or one per output row (shape (" +
            std::to_string(N) + ",)), got shape " + shape_str(scale.shape()));
  Tensor hs = host_f32(scale);
  const float* sv = hs.data<float>();
  for (int64_t i = 0, ns = hs.numel(); i < ns; ++i) {
    const float v = sv[i];
    if (!(std::isfinite(v) && v > 0.0f))  // the message only when it is needed: this loop runs every call
      throw ValueError(arg(fn, "scale") + " must be finite and > 0, got " + std::to_string(v) + " at flat index " +
                       std::to_string(i));
  }
  const Tensor b = check_bias(fn, bias, N);
  if (x.device() == Device::CPU && (r.M <= cpu::kWeightGemvRows || reference))
    return gemv(f, x, r, codes, N, hs.data<float>(), per_row ? 1 : 0, Tensor(), b, reference);
  check(!reference, std::string(fn) + "(): the reference kernel runs on the CPU stream only");
  QAxes axes;
  if (per_row) axes.ch_axis = 0;
  Tensor zero = full({}, 0.0, DType::Int32, x.device());
  Tensor w = dequantize_float(codes, scale, zero, qdtype, axes, DType::Float32);
  return linear(x, w, opt(b));
}

Tensor block_weight_linear(const Tensor& x, const Tensor& words, const Tensor& scales, const std::string& mode,
                           const Tensor& bias, bool reference) {
  const char* fn = "block_weight_linear";
  common_device(fn, {&x, &words, &scales});
  if (bias.defined()) common_device(fn, {&x, &bias});
  kernels::QfwFormat f;
  if (mode == "mxfp8") f = kernels::QfwFormat::Mxfp8;
  else if (mode == "mxfp4") f = kernels::QfwFormat::Mxfp4;
  else if (mode == "nvfp4") f = kernels::QfwFormat::Nvfp4;
  else throw ValueError(arg(fn, "mode") + " must be 'mxfp8', 'mxfp4' or 'nvfp4', got '" + mode + "'");
  const int64_t bits = f == kernels::QfwFormat::Mxfp8 ? 8 : 4, G = static_cast<int64_t>(kernels::qfw_group(f));
  const Rows r = check_x(fn, x);
  check<TypeError>(words.dtype() == DType::Int32, arg(fn, "words") + " must be int32 (MLX's uint32 words), got " +
                                                      dtype_name(words.dtype()));
  check(words.ndim() == 2, arg(fn, "words") + " must have shape (N, K * " + std::to_string(bits) + " / 32), got " +
                               shape_str(words.shape()));
  const int64_t N = words.size(0);
  check(r.K > 0 && r.K % 32 == 0, arg(fn, "x") + ": the last dimension K must be a positive multiple of 32 for '" +
                                      mode + "', got " + std::to_string(r.K));
  check(words.size(1) * 32 / bits == r.K, std::string(fn) + "(): shapes do not match: 'x' " + shape_str(x.shape()) +
                                              " has K = " + std::to_string(r.K) + " but 'words' " +
                                              shape_str(words.shape()) + " holds " +
                                              std::to_string(words.size(1) * 32 / bits) + " codes per row");
  check<TypeError>(scales.dtype() == DType::UInt8, arg(fn, "scales") + " must be uint8 scale codes for '" + mode +
                                                       "', got " + dtype_name(scales.dtype()));
  const Shape pshape{N, r.K / G};
  check(scales.shape() == pshape, arg(fn, "scales") + " must have shape " + shape_str(pshape) + " (N, K / " +
                                      std::to_string(G) + "), got " + shape_str(scales.shape()));
  const Tensor b = check_bias(fn, bias, N);
  if (x.device() == Device::CPU && (r.M <= cpu::kWeightGemvRows || reference))
    return gemv(f, x, r, words, N, nullptr, 0, scales, b, reference);
  check(!reference, std::string(fn) + "(): the reference kernel runs on the CPU stream only");
  return linear(x, block_dequantize(words, scales, mode), opt(b));
}

}  // namespace lucid::ops
