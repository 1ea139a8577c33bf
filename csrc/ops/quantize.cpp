#include "ops/quantize.h"

#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "core/convert.h"
#include "core/errors.h"
#include "cpu/quantize.h"
#include "gpu/quantize.h"
#include "ops/copy.h"
#include "ops/qparams.h"

namespace lucid::ops {

using namespace quant_detail;

namespace {

bool is_float_input(DType t) { return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16; }

// ------------------------------------------------------------- layouts ----

struct Layout {
  cpu::QSegments seg;
  Shape x_view, p_view;
  Shape p_shape;  // the parameter shape a full-size scale must have
  int64_t count = 1;
  const char* mode = "per-tensor";
};

Layout make_layout(const char* fn, const Shape& xs, const QAxes& axes) {
  Layout L;
  int nd = static_cast<int>(xs.size());
  int64_t n = numel(xs);
  if (axes.ch_axis && axes.group_size != 0)
    throw ValueError(std::string(fn) + "(): pass either 'ch_axis' (per-channel) or 'group_size' (per-group), not both");
  auto wrap_axis = [&](int64_t a, const char* name) {
    check(nd > 0 && a >= -nd && a < nd, arg(fn, name) + " is out of range for a " + std::to_string(nd) +
                                            "-d input: expected an axis in [" + std::to_string(-nd) + ", " +
                                            std::to_string(nd - 1) + "], got " + std::to_string(a));
    return static_cast<int>(a < 0 ? a + nd : a);
  };
  auto split = [&](int a, int64_t& outer, int64_t& len, int64_t& inner) {
    outer = 1, inner = 1, len = xs[a];
    for (int i = 0; i < a; ++i) outer *= xs[i];
    for (int i = a + 1; i < nd; ++i) inner *= xs[i];
  };
  if (axes.ch_axis) {
    int a = wrap_axis(*axes.ch_axis, "ch_axis");
    int64_t outer, len, inner;
    split(a, outer, len, inner);
    L.seg = cpu::QSegments::per_channel(outer, len, inner);
    L.x_view = {outer, len, inner};
    L.p_view = {1, len, 1};
    L.p_shape = {len};
    L.count = len;
    L.mode = "per-channel";
  } else if (axes.group_size != 0) {
    check(axes.group_size > 0, arg(fn, "group_size") + " must be a positive int, got " + std::to_string(axes.group_size));
    int a = wrap_axis(axes.axis, "axis");
    int64_t outer, len, inner, g = axes.group_size;
    split(a, outer, len, inner);
    check(len % g == 0, arg(fn, "group_size") + " (" + std::to_string(g) + ") must divide the size of axis " +
                            std::to_string(a) + " (" + std::to_string(len) + ")");
    L.seg = cpu::QSegments::per_group(outer, len, inner, g);
    L.x_view = {outer, len / g, g, inner};
    L.p_view = {outer, len / g, 1, inner};
    L.p_shape = xs;
    L.p_shape[a] = len / g;
    L.count = outer * (len / g) * inner;
    L.mode = "per-group";
  } else {
    L.seg = cpu::QSegments::per_tensor(n);
    L.x_view = xs;
    L.p_view = {};
    L.count = 1;
  }
  return L;
}

// Checks a parameter tensor's shape against the layout: one element always
// broadcasts; otherwise it must match the per-channel length / group shape.
void check_param_shape(const char* fn, const char* name, const Tensor& p, const Layout& L) {
  if (p.numel() == 1) return;
  if (L.count == 1 && L.p_shape.empty())
    throw ValueError(arg(fn, name) + " must be a number or a one-element tensor for per-tensor quantization "
                     "(pass ch_axis= or group_size= for more), got shape " + shape_str(p.shape()));
  bool ok = L.p_shape.size() == 1 ? (p.ndim() == 1 && p.size(0) == L.p_shape[0]) : p.shape() == L.p_shape;
  if (!ok)
    throw ValueError(arg(fn, name) + " must have shape " + shape_str(L.p_shape) + " for " + L.mode +
                     " quantization of an input of this shape, got shape " + shape_str(p.shape()));
}

// ---------------------------------------------------------- parameters ----

struct Params {
  ParamValues<float> scale;
  ParamValues<int32_t> zp;
};

Params read_params(const char* fn, const Tensor& x, const Tensor& scale, const Tensor& zp, const Layout& L,
                   int64_t qmin, int64_t qmax, std::string_view grid) {
  common_device(fn, {&x, &scale, &zp});
  check_param_shape(fn, "scale", scale, L);
  check_param_shape(fn, "zero_point", zp, L);
  if (scale.dtype() == DType::Float32 && zp.dtype() == DType::Int32 && scale.device() == Device::CPU &&
      zp.device() == Device::CPU && scale.numel() == L.count && zp.numel() == L.count && scale.is_contiguous() &&
      zp.is_contiguous() && L.count > 0) {
    // Both used in place after one vectorized pass each; a failure goes
    // through the checks below for the message.
    int32_t slo, shi, zlo, zhi;
    cpu::float_bits_range(scale.data<float>(), L.count, slo, shi);
    cpu::int32_range(zp.data<int32_t>(), L.count, zlo, zhi);
    if (slo >= 0x00800000 && shi < 0x7f800000 && zlo >= qmin && zhi <= qmax) return {{scale, {}}, {zp, {}}};
  }
  ParamValues<float> s = read_scale(fn, "scale", scale, L.count);
  return {std::move(s), read_zero_point(fn, "zero_point", zp, L.count, qmin, qmax, grid)};
}

// Where an op's scale and zero point come from: two tensors (any layout), or
// two numbers for the per-tensor case (the Python-number path of
// lucid.quantization), read as the 0-d float32 / int64 tensors of them would
// be: the same values, the same checks and messages.
struct ParamSource {
  const Tensor* scale = nullptr;  // null: the numbers below
  const Tensor* zero_point = nullptr;
  double scale_value = 0.0;
  int64_t zero_point_value = 0;

  Params read(const char* fn, const Tensor& x, const Layout& L, int64_t qmin, int64_t qmax,
              std::string_view grid) const {
    if (scale) return read_params(fn, x, *scale, *zero_point, L, qmin, qmax, grid);
    const float s = convert<float>(scale_value);  // what ops::full(..., Float32) stores
    const int64_t z = zero_point_value;
    if (!(z >= qmin && z <= qmax)) zero_point_range_error(fn, "zero_point", qmin, qmax, grid, z, 0, 1);
    return {{Tensor(), checked_scales(fn, "scale", &s, 1, L.count)},
            {Tensor(), std::vector<int32_t>(static_cast<size_t>(L.count), static_cast<int32_t>(z))}};
  }
};

void check_float_input(const char* fn, const char* name, const Tensor& x) {
  // float64 is refused as torch.quantize_per_tensor refuses it: the formulas
  // (docs/numerics.md) are float32's; a float64 caller casts first. The message
  // is built only on failure (this check is on every quantize call's path).
  if (!is_float_input(x.dtype()))
    throw TypeError(arg(fn, name) + " must be a floating tensor (float32, float16 or bfloat16), got " +
                    dtype_name(x.dtype()) +
                    (x.dtype() == DType::Float64 ? "; quantization computes in float32: cast with .float() first"
                                                 : ""));
}

int64_t codes_min(DType t) {
  switch (t) {
    case DType::UInt8: return 0;
    case DType::Int8: return -128;
    case DType::Int16: return -32768;
    default: return std::numeric_limits<int32_t>::min();
  }
}
// The zero point's range named in dequantize's error message.
const char* codes_range(DType t) {
  switch (t) {
    case DType::UInt8: return "the range of uint8 codes";
    case DType::Int8: return "the range of int8 codes";
    case DType::Int16: return "the range of int16 codes";
    case DType::Int32: return "the range of int32 codes";
    default: return "the range of int64 codes";
  }
}
int64_t codes_max(DType t) {
  switch (t) {
    case DType::UInt8: return 255;
    case DType::Int8: return 127;
    case DType::Int16: return 32767;
    default: return std::numeric_limits<int32_t>::max();
  }
}

}  // namespace

namespace {

Tensor quantize_from(const Tensor& x, const ParamSource& src, const std::string& qdtype, const QAxes& axes,
                     bool reference) {
  const char* fn = "quantize";
  Grid g = grid_of(qdtype, fn);
  common_device(fn, {&x});
  check_float_input(fn, "x", x);
  Layout L = make_layout(fn, x.shape(), axes);
  Params p = src.read(fn, x, L, g.qmin, g.qmax, g.name);
  cpu::QBounds b = cpu::QBounds::of(g.qmin, g.qmax);
  if (x.device() == Device::GPU) {
    check(!reference, "quantize(): the reference kernel runs on the CPU stream only");
    return gpu::quantize(x, gpu_tensor(p.scale.vec(L.count), DType::Float32),
                         gpu_tensor(p.zp.vec(L.count), DType::Int32), L.x_view, L.p_view, b.lo, b.hi, g.storage);
  }
  Tensor xc = contiguous(x);
  Tensor out = Tensor::empty_cpu(x.shape(), g.storage);
  if (reference) cpu::quantize_reference(xc, out, L.seg, p.scale.data(), p.zp.data(), b);
  else cpu::quantize(xc, out, L.seg, p.scale.data(), p.zp.data(), b);
  return out;
}

Tensor dequantize_from(const Tensor& q, const ParamSource& src, const QAxes& axes, DType dtype, bool reference) {
  const char* fn = "dequantize";
  common_device(fn, {&q});
  if (!is_integral(q.dtype()))
    throw TypeError(arg(fn, "q") + " must hold integer codes (int8, uint8, int16, int32 or int64), got " +
                    dtype_name(q.dtype()));
  if (!is_float_input(dtype))
    throw TypeError(arg(fn, "dtype") + " must be float32, float16 or bfloat16, got " + dtype_name(dtype));
  Layout L = make_layout(fn, q.shape(), axes);
  Params p = src.read(fn, q, L, codes_min(q.dtype()), codes_max(q.dtype()), codes_range(q.dtype()));
  if (q.device() == Device::GPU) {
    check(!reference, "dequantize(): the reference kernel runs on the CPU stream only");
    return gpu::dequantize(q, gpu_tensor(p.scale.vec(L.count), DType::Float32),
                           gpu_tensor(p.zp.vec(L.count), DType::Int32), L.x_view, L.p_view, dtype);
  }
  Tensor qc = contiguous(q);
  Tensor out = Tensor::empty_cpu(q.shape(), dtype);
  if (reference) cpu::dequantize_reference(qc, out, L.seg, p.scale.data(), p.zp.data());
  else cpu::dequantize(qc, out, L.seg, p.scale.data(), p.zp.data());
  return out;
}

std::pair<Tensor, Tensor> fake_quantize_from(const Tensor& x, const ParamSource& src, int64_t quant_min,
                                             int64_t quant_max, const QAxes& axes, bool reference) {
  const char* fn = "fake_quantize";
  common_device(fn, {&x});
  check_float_input(fn, "x", x);
  constexpr int64_t i32min = std::numeric_limits<int32_t>::min(), i32max = std::numeric_limits<int32_t>::max();
  if (!(quant_min >= i32min && quant_min <= i32max))
    throw ValueError(arg(fn, "quant_min") + " must fit in int32, got " + std::to_string(quant_min));
  if (!(quant_max >= i32min && quant_max <= i32max))
    throw ValueError(arg(fn, "quant_max") + " must fit in int32, got " + std::to_string(quant_max));
  if (quant_min > quant_max)
    throw ValueError(std::string(fn) + "(): argument 'quant_min' (" + std::to_string(quant_min) +
                     ") must be <= 'quant_max' (" + std::to_string(quant_max) + ")");
  Layout L = make_layout(fn, x.shape(), axes);
  Params p = src.read(fn, x, L, quant_min, quant_max, "[quant_min, quant_max]");
  bool wide = quant_max - quant_min > i32max;
  if (x.device() == Device::GPU) {
    check(!reference, "fake_quantize(): the reference kernel runs on the CPU stream only");
    cpu::QBounds b = cpu::QBounds::of(quant_min, quant_max);
    return gpu::fake_quantize(x, gpu_tensor(p.scale.vec(L.count), DType::Float32),
                              gpu_tensor(p.zp.vec(L.count), DType::Int32), L.x_view, L.p_view, b.lo, b.hi, wide);
  }
  Tensor xc = contiguous(x);
  Tensor y = Tensor::empty_cpu(x.shape(), x.dtype());
  Tensor mask = Tensor::empty_cpu(x.shape(), DType::Bool);
  if (reference) cpu::fake_quantize_reference(xc, y, mask, L.seg, p.scale.data(), p.zp.data(), quant_min, quant_max);
  else cpu::fake_quantize(xc, y, mask, L.seg, p.scale.data(), p.zp.data(), quant_min, quant_max);
  return {y, mask};
}

}  // namespace

Tensor quantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point, const std::string& qdtype,
                const QAxes& axes, bool reference) {
  return quantize_from(x, ParamSource{&scale, &zero_point}, qdtype, axes, reference);
}
Tensor quantize(const Tensor& x, double scale, int64_t zero_point, const std::string& qdtype) {
  return quantize_from(x, ParamSource{nullptr, nullptr, scale, zero_point}, qdtype, QAxes{}, false);
}

Tensor dequantize(const Tensor& q, const Tensor& scale, const Tensor& zero_point, const QAxes& axes, DType dtype,
                  bool reference) {
  return dequantize_from(q, ParamSource{&scale, &zero_point}, axes, dtype, reference);
}
Tensor dequantize(const Tensor& q, double scale, int64_t zero_point, DType dtype) {
  return dequantize_from(q, ParamSource{nullptr, nullptr, scale, zero_point}, QAxes{}, dtype, false);
}

std::pair<Tensor, Tensor> fake_quantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point,
                                        int64_t quant_min, int64_t quant_max, const QAxes& axes, bool reference) {
  return fake_quantize_from(x, ParamSource{&scale, &zero_point}, quant_min, quant_max, axes, reference);
}
std::pair<Tensor, Tensor> fake_quantize(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                        int64_t quant_max) {
  return fake_quantize_from(x, ParamSource{nullptr, nullptr, scale, zero_point}, quant_min, quant_max, QAxes{},
                            false);
}

namespace {

const minifloat::Format& float_grid(const std::string& name, const char* fn) {
  if (name == "float8_e4m3fn") return minifloat::kE4M3FN;
  if (name == "float8_e5m2") return minifloat::kE5M2;
  if (name == "float4_e2m1fn") return minifloat::kE2M1FN;
  throw TypeError(arg(fn, "qdtype") + " must be a float grid (float8_e4m3fn, float8_e5m2, float4_e2m1fn), got '" +
                  name + "'");
}

// A float grid's zero point: checked to be 0 everywhere (its values are not used).
void check_float_zero_point(const char* fn, const Tensor& x, const Tensor& zp, const Layout& L) {
  common_device(fn, {&x, &zp});
  check_param_shape(fn, "zero_point", zp, L);
  read_zero_point(fn, "zero_point", zp, zp.numel() == 1 ? 1 : L.count, 0, 0, "a float grid (zero point 0 only)");
}

}  // namespace

Tensor quantize_float(const Tensor& x, const Tensor& scale, const Tensor& zero_point, const std::string& qdtype,
                      const QAxes& axes, bool saturate) {
  const char* fn = "quantize";
  const minifloat::Format& f = float_grid(qdtype, fn);
  common_device(fn, {&x, &scale});
  check_float_input(fn, "x", x);
  Layout L = make_layout(fn, x.shape(), axes);
  check_param_shape(fn, "scale", scale, L);
  check_float_zero_point(fn, x, zero_point, L);
  ParamValues<float> sc = read_scale(fn, "scale", scale, L.count);
  if (x.device() == Device::GPU)
    return gpu::quantize_minifloat(x, gpu_tensor(sc.vec(L.count), DType::Float32), L.x_view, L.p_view, f, saturate);
  Tensor xc = contiguous(x);
  Tensor out = Tensor::empty_cpu(x.shape(), DType::UInt8);
  cpu::quantize_minifloat(xc, out, L.seg, sc.data(), f, saturate);
  return out;
}

Tensor dequantize_float(const Tensor& codes, const Tensor& scale, const Tensor& zero_point, const std::string& qdtype,
                        const QAxes& axes, DType dtype) {
  const char* fn = "dequantize";
  const minifloat::Format& f = float_grid(qdtype, fn);
  common_device(fn, {&codes, &scale});
  check<TypeError>(codes.dtype() == DType::UInt8, arg(fn, "q") + " must hold uint8 codes (bit patterns) for " + qdtype +
                                                      ", got " + dtype_name(codes.dtype()));
  if (!is_float_input(dtype))
    throw TypeError(arg(fn, "dtype") + " must be float32, float16 or bfloat16, got " + dtype_name(dtype));
  Layout L = make_layout(fn, codes.shape(), axes);
  check_param_shape(fn, "scale", scale, L);
  check_float_zero_point(fn, codes, zero_point, L);
  ParamValues<float> sc = read_scale(fn, "scale", scale, L.count);
  if (codes.device() == Device::GPU)
    return gpu::dequantize_minifloat(codes, gpu_tensor(sc.vec(L.count), DType::Float32), L.x_view, L.p_view, f,
                                     dtype);
  Tensor qc = contiguous(codes);
  Tensor out = Tensor::empty_cpu(codes.shape(), dtype);
  cpu::dequantize_minifloat(qc, out, L.seg, sc.data(), f);
  return out;
}

std::pair<Tensor, Tensor> fake_quantize_float(const Tensor& x, const Tensor& scale, const Tensor& zero_point,
                                              const std::string& qdtype, const QAxes& axes, bool saturate) {
  const char* fn = "fake_quantize";
  const minifloat::Format& f = float_grid(qdtype, fn);
  common_device(fn, {&x, &scale});
  check_float_input(fn, "x", x);
  if (x.device() != Device::CPU || x.dtype() != DType::Float32)
    throw TypeError("internal: " + arg(fn, "x") + " of the fused float-grid kernel must be a float32 CPU tensor");
  Layout L = make_layout(fn, x.shape(), axes);
  check_param_shape(fn, "scale", scale, L);
  check_float_zero_point(fn, x, zero_point, L);
  ParamValues<float> sc = read_scale(fn, "scale", scale, L.count);
  Tensor xc = contiguous(x);
  Tensor y = Tensor::empty_cpu(x.shape(), DType::Float32);
  Tensor mask = Tensor::empty_cpu(x.shape(), DType::Bool);
  cpu::fake_quantize_minifloat(xc, y, mask, L.seg, sc.data(), f, saturate);
  return {y, mask};
}

Tensor fake_quantize_backward(const Tensor& dy, const Tensor& mask) {
  const char* fn = "fake_quantize_backward";
  common_device(fn, {&dy, &mask});
  check_float_input(fn, "grad", dy);
  check<TypeError>(mask.dtype() == DType::Bool, arg(fn, "mask") + " must be bool, got " + dtype_name(mask.dtype()));
  check(dy.shape() == mask.shape(), arg(fn, "grad") + " has shape " + shape_str(dy.shape()) +
                                        " but the mask has shape " + shape_str(mask.shape()));
  if (dy.device() == Device::GPU) return gpu::masked_grad(dy, mask);
  Tensor g = contiguous(dy), m = contiguous(mask);
  Tensor dx = Tensor::empty_cpu(dy.shape(), dy.dtype());
  cpu::masked_grad(g, m, dx);
  return dx;
}

}  // namespace lucid::ops
