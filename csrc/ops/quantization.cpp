#include "ops/quantization.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/convert.h"
#include "core/errors.h"
#include "cpu/quantization.h"
#include "gpu/quantization.h"
#include "gpu/transfer.h"
#include "ops/copy.h"
#include "ops/nn_common.h"
#include "core/window2d.h"

namespace lucid::ops {

namespace {

struct Grid {
  int64_t qmin, qmax;
  DType storage;
  std::string name;
};

Grid grid_of(const std::string& name, const char* fn) {
  if (name == "qint8") return {-128, 127, DType::Int8, name};
  if (name == "quint8") return {0, 255, DType::UInt8, name};
  if (name == "qint4") return {-8, 7, DType::Int8, name};
  if (name == "quint4") return {0, 15, DType::UInt8, name};
  if (name == "qint32") return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), DType::Int32, name};
  throw TypeError(std::string(fn) + "(): argument 'qdtype' must be one of qint8, quint8, qint4, quint4, qint32, got '" +
                  name + "'");
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

std::string arg(const char* fn, const char* name) { return std::string(fn) + "(): argument '" + name + "'"; }

bool is_float_input(DType t) { return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16; }

// A small tensor's values on the host, as float32 (floats) or int64 (integers).
Tensor host_values(const Tensor& t, DType as) {
  Tensor h = t.device() == Device::CPU ? t : to_device(t, Device::CPU);
  return contiguous(h.dtype() == as ? h : astype(h, as));
}

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

// One parameter's `count` values: the caller's own tensor when it already is
// contiguous CPU data of the kernels' type with one value per slot (used in
// place: per-group parameters can number 1/32 of the input, and copying them
// cost a tenth of a 16M-element per-group quantize), else a checked copy.
template <class T>
struct ParamValues {
  Tensor held;
  std::vector<T> owned;
  const T* data() const { return held.defined() ? static_cast<const T*>(held.raw_data()) : owned.data(); }
  T operator[](int64_t i) const { return data()[i]; }
  std::vector<T> vec(int64_t count) const { return std::vector<T>(data(), data() + count); }
};

struct Params {
  ParamValues<float> scale;
  ParamValues<int32_t> zp;
};

// Throws unless the n float32 scales at v are finite and >= 2^-126.
void check_scales(const char* fn, const char* name, const float* v, int64_t n) {
  // Subnormal scales are rejected: Metal (and CUDA with flush-to-zero)
  // flush them to 0, which would make the streams disagree. One branch-free
  // pass first: as int32, such a float is 0x00800000 <= bits < 0x7f800000.
  int32_t lo = 0x00800000, hi = 0x00800000;
  if (n > 0) cpu::float_bits_range(v, n, lo, hi);
  if (lo >= 0x00800000 && hi < 0x7f800000) return;
  for (int64_t i = 0; i < n; ++i)
    if (!(std::isfinite(v[i]) && v[i] >= std::numeric_limits<float>::min()))  // message built only on failure
      throw ValueError(arg(fn, name) + " must be finite and > 0, got " + fmt(v[i]) +
                       (n > 1 ? " at index " + std::to_string(i) : std::string()) +
                       (v[i] > 0.0f && std::isfinite(v[i])
                            ? " (subnormal: a scale must be >= 2^-126, since GPUs flush subnormals to 0)"
                            : std::string()));
}

// The n float32 scales at v, checked, as `count` values (one value broadcast).
std::vector<float> checked_scales(const char* fn, const char* name, const float* v, int64_t n, int64_t count) {
  check_scales(fn, name, v, n);
  if (n == count) return std::vector<float>(v, v + n);
  return std::vector<float>(static_cast<size_t>(count), v[0]);  // one value broadcast
}

ParamValues<float> read_scale(const char* fn, const char* name, const Tensor& s, int64_t count) {
  // Messages are built only on failure (an `if`, not check(cond, msg)): these run on every call.
  if (s.dtype() == DType::Bool) throw TypeError(arg(fn, name) + " must be a floating tensor or a positive number, got bool");
  Tensor h = host_values(s, DType::Float32);
  if (h.numel() == count) {
    check_scales(fn, name, h.data<float>(), count);
    return {h, {}};
  }
  return {Tensor(), checked_scales(fn, name, h.data<float>(), h.numel(), count)};
}

[[noreturn]] void zero_point_range_error(const char* fn, const char* name, int64_t qmin, int64_t qmax,
                                         std::string_view grid, int64_t v, int64_t i, int64_t n) {
  throw ValueError(arg(fn, name) + " must lie in [" + std::to_string(qmin) + ", " + std::to_string(qmax) + "] (" +
                   std::string(grid) + "), got " + std::to_string(v) +
                   (n > 1 ? " at index " + std::to_string(i) : std::string()));
}

ParamValues<int32_t> read_zero_point(const char* fn, const char* name, const Tensor& z, int64_t count, int64_t qmin,
                                     int64_t qmax, std::string_view grid) {
  if (z.dtype() == DType::Bool)
    throw TypeError(arg(fn, name) + " must be an integer (or integral float) tensor or an int, got bool");
  const int64_t n = z.numel();
  auto fail_range = [&](int64_t i, int64_t v) { zero_point_range_error(fn, name, qmin, qmax, grid, v, i, n); };
  if (z.dtype() == DType::Int32 && z.device() == Device::CPU && n == count) {
    // int32 values one per slot (the usual per-channel / per-group tensor):
    // used in place after a branch-free range pass.
    Tensor h = contiguous(z);
    const int32_t* v = h.data<int32_t>();
    int32_t lo = 0, hi = 0;
    if (n > 0) cpu::int32_range(v, n, lo, hi);
    if (lo < qmin || hi > qmax)
      for (int64_t i = 0; i < n; ++i)
        if (!(v[i] >= qmin && v[i] <= qmax)) fail_range(i, v[i]);
    return {h, {}};
  }
  std::vector<int32_t> out(static_cast<size_t>(n));
  if (is_floating(z.dtype())) {
    // Users write lucid.zeros(C): accepted when every value is integral.
    Tensor h = host_values(z, DType::Float32);
    const float* v = h.data<float>();
    for (int64_t i = 0; i < n; ++i) {
      if (!(std::isfinite(v[i]) && std::nearbyint(v[i]) == v[i]))
        throw ValueError(arg(fn, name) + " must hold integer values, got " + fmt(v[i]) +
                         (n > 1 ? " at index " + std::to_string(i) : std::string()));
      // Compared in double: float(qmax) may round above qmax.
      if (!(static_cast<double>(v[i]) >= qmin && static_cast<double>(v[i]) <= qmax))
        fail_range(i, v[i] >= 9.2e18f ? INT64_MAX : (v[i] <= -9.2e18f ? INT64_MIN : static_cast<int64_t>(v[i])));
      out[i] = static_cast<int32_t>(v[i]);
    }
  } else {
    Tensor h = host_values(z, DType::Int64);
    const int64_t* v = h.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      if (!(v[i] >= qmin && v[i] <= qmax)) fail_range(i, v[i]);
      out[i] = static_cast<int32_t>(v[i]);
    }
  }
  if (n == count) return {Tensor(), std::move(out)};
  return {Tensor(), std::vector<int32_t>(static_cast<size_t>(count), out[0])};
}

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

template <class T>
Tensor host_tensor(const std::vector<T>& v, DType dt) {
  Tensor t = Tensor::empty_cpu({static_cast<int64_t>(v.size())}, dt);
  if (!v.empty()) std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(T));
  return t;
}

template <class T>
Tensor gpu_tensor(const std::vector<T>& v, DType dt) { return gpu::upload(host_tensor(v, dt)); }

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

// ------------------------------------------------------------- quantize ----

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

// ----------------------------------------------------------------- int4 ----

namespace {
void split_axis(const Shape& s, int a, int64_t& outer, int64_t& len, int64_t& inner) {
  outer = 1, inner = 1, len = s[a];
  for (int i = 0; i < a; ++i) outer *= s[i];
  for (size_t i = a + 1; i < s.size(); ++i) inner *= s[i];
}
int int4_axis(const char* fn, const Tensor& t, int64_t axis) {
  int nd = t.ndim();
  check(nd > 0, arg(fn, t.dtype() == DType::UInt8 && std::string(fn) == "unpack_int4" ? "packed" : "codes") +
                    " must have at least one dimension, got a 0-d tensor");
  check(axis >= -nd && axis < nd, arg(fn, "axis") + " is out of range for a " + std::to_string(nd) +
                                      "-d input: expected an axis in [" + std::to_string(-nd) + ", " +
                                      std::to_string(nd - 1) + "], got " + std::to_string(axis));
  return static_cast<int>(axis < 0 ? axis + nd : axis);
}
}  // namespace

Tensor pack_int4(const Tensor& codes, int64_t axis) {
  const char* fn = "pack_int4";
  common_device(fn, {&codes});
  check<TypeError>(codes.dtype() == DType::Int8 || codes.dtype() == DType::UInt8,
                   arg(fn, "codes") + " must hold int8 (qint4) or uint8 (quint4) codes, got " + dtype_name(codes.dtype()));
  int a = int4_axis(fn, codes, axis);
  int64_t outer, len, inner;
  split_axis(codes.shape(), a, outer, len, inner);
  Shape out_shape = codes.shape();
  out_shape[a] = (len + 1) / 2;
  if (codes.device() == Device::GPU) return gpu::pack_int4(codes, outer, len, inner, out_shape);
  Tensor c = contiguous(codes);
  Tensor out = Tensor::empty_cpu(out_shape, DType::UInt8);
  cpu::pack_int4(c, out, outer, len, inner);
  return out;
}

Tensor unpack_int4(const Tensor& packed, int64_t length, bool is_signed, int64_t axis) {
  const char* fn = "unpack_int4";
  common_device(fn, {&packed});
  check<TypeError>(packed.dtype() == DType::UInt8,
                   arg(fn, "packed") + " must be a uint8 tensor from pack_int4, got " + dtype_name(packed.dtype()));
  int a = int4_axis(fn, packed, axis);
  int64_t outer, half, inner;
  split_axis(packed.shape(), a, outer, half, inner);
  check(length >= 0 && (length + 1) / 2 == half,
        arg(fn, "length") + " must be " + std::to_string(2 * half - 1) + " or " + std::to_string(2 * half) +
            " for " + std::to_string(half) + " packed bytes along axis " + std::to_string(a) + ", got " +
            std::to_string(length));
  Shape out_shape = packed.shape();
  out_shape[a] = length;
  DType dt = is_signed ? DType::Int8 : DType::UInt8;
  if (packed.device() == Device::GPU) return gpu::unpack_int4(packed, outer, length, inner, dt, out_shape);
  Tensor p = contiguous(packed);
  Tensor out = Tensor::empty_cpu(out_shape, dt);
  cpu::unpack_int4(p, out, outer, length, inner);
  return out;
}

// -------------------------------------------------------------- qmatmul ----

namespace {

using nn_detail::ints_str;

// Everything qmatmul and qconv2d share: the validated quantization
// parameters of the activation, the weight (n output channels) and the
// output, and the host-side constants of docs/numerics.md (sxw[n] =
// fl(sx * sw[n]), bias_q[n], M[n]) computed once so both streams use the same
// bits.
struct QProduct {
  int32_t zx = 0, zy = 0;
  std::vector<int32_t> zw, bias_q;
  std::vector<float> sxw, mult;
  bool quantized_out = false;
  Grid og;
  cpu::QBounds ob;
  DType out_dtype() const { return quantized_out ? og.storage : DType::Float32; }
  const float* scale() const { return quantized_out ? mult.data() : sxw.data(); }
  const int32_t* bias() const { return bias_q.empty() ? nullptr : bias_q.data(); }
};

QProduct product_params(const char* fn, const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, int64_t N,
                        const Tensor& w_scale, const Tensor& w_zp, const Tensor& bias, const Tensor& out_scale,
                        const Tensor& out_zp, const std::string& out_qdtype) {
  QProduct q;
  Grid xg = xq.dtype() == DType::UInt8 ? grid_of("quint8", fn) : grid_of("qint8", fn);
  check(x_scale.numel() == 1, arg(fn, "x_scale") + " must be a number or a one-element tensor, got shape " + shape_str(x_scale.shape()));
  check(x_zp.numel() == 1, arg(fn, "x_zp") + " must be an int or a one-element tensor, got shape " + shape_str(x_zp.shape()));
  float sx = read_scale(fn, "x_scale", x_scale, 1)[0];
  q.zx = read_zero_point(fn, "x_zp", x_zp, 1, xg.qmin, xg.qmax, xg.name)[0];
  auto per_n = [&](const Tensor& t, const char* name) {
    check(t.numel() == 1 || (t.ndim() == 1 && t.size(0) == N),
          arg(fn, name) + " must be a number or have shape (" + std::to_string(N) + ",) (one per output channel), got shape " +
              shape_str(t.shape()));
  };
  per_n(w_scale, "w_scale");
  per_n(w_zp, "w_zp");
  std::vector<float> sw = read_scale(fn, "w_scale", w_scale, N).vec(N);
  q.zw = read_zero_point(fn, "w_zp", w_zp, N, -128, 127, "qint8").vec(N);
  // Combined scales and multipliers must be finite normal floats, for the
  // same reason as the scales themselves; then no requantization step can
  // produce NaN (acc is finite), so no NaN case exists to define.
  auto check_normal = [&](float v, const char* what, int64_t n) {
    if (!(std::isfinite(v) && v >= std::numeric_limits<float>::min()))
      throw ValueError(std::string(fn) + "(): the " + what + " at output channel " + std::to_string(n) + " is " +
                       fmt(v) + ", not a finite normal float32 (>= 2^-126); rescale the inputs");
  };
  q.sxw.resize(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) {
    q.sxw[n] = sx * sw[n];
    check_normal(q.sxw[n], "combined scale x_scale * w_scale", n);
  }
  if (bias.defined()) {
    check<TypeError>(is_floating(bias.dtype()), arg(fn, "bias") + " must be a floating tensor, got " + dtype_name(bias.dtype()));
    check(bias.ndim() == 1 && bias.size(0) == N, arg(fn, "bias") + " must have shape (" + std::to_string(N) + ",), got " +
                                                     shape_str(bias.shape()));
    Tensor hb = host_values(bias, DType::Float32);
    cpu::QBounds i32 = cpu::QBounds::of(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
    q.bias_q.resize(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
      float b = hb.data<float>()[n];
      if (!std::isfinite(b))
        throw ValueError(arg(fn, "bias") + " must be finite, got " + fmt(b) + " at index " + std::to_string(n));
      float r = std::nearbyint(b / q.sxw[n]);
      r = r < i32.lo ? i32.lo : (r > i32.hi ? i32.hi : r);  // saturate into int32
      q.bias_q[n] = static_cast<int32_t>(r);
    }
  }
  q.quantized_out = out_scale.defined();
  if (!q.quantized_out)
    check(!out_zp.defined() && out_qdtype.empty(),
          std::string(fn) + "(): 'out_zp' and 'out_qdtype' need 'out_scale' (without it the output is float32)");
  q.og = q.quantized_out ? grid_of(out_qdtype.empty() ? xg.name : out_qdtype, fn) : xg;
  if (q.quantized_out) {
    check(out_scale.numel() == 1, arg(fn, "out_scale") + " must be a number or a one-element tensor, got shape " +
                                      shape_str(out_scale.shape()));
    float sy = read_scale(fn, "out_scale", out_scale, 1)[0];
    if (out_zp.defined()) {
      check(out_zp.numel() == 1, arg(fn, "out_zp") + " must be an int or a one-element tensor, got shape " +
                                     shape_str(out_zp.shape()));
      q.zy = read_zero_point(fn, "out_zp", out_zp, 1, q.og.qmin, q.og.qmax, q.og.name)[0];
    }
    q.mult.resize(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
      q.mult[n] = q.sxw[n] / sy;
      check_normal(q.mult[n], "multiplier x_scale * w_scale / out_scale", n);
    }
  }
  q.ob = cpu::QBounds::of(q.og.qmin, q.og.qmax);
  return q;
}

// |x - zx| <= 255 and |w - zw| <= 255, so K terms stay below 2^31 when
// K * 255 * 255 < 2^31.
void check_k(const char* fn, int64_t K) {
  constexpr int64_t kMaxK = ((int64_t{1} << 31) - 1) / (255 * 255);
  check(K <= kMaxK, std::string(fn) + "(): K = " + std::to_string(K) + " is too large for exact int32 accumulation "
                        "(K * 255 * 255 must stay below 2^31, so K <= " + std::to_string(kMaxK) + ")");
}

void check_codes(const char* fn, const Tensor& xq, const Tensor& wq) {
  check<TypeError>(xq.dtype() == DType::UInt8 || xq.dtype() == DType::Int8,
                   arg(fn, "xq") + " must hold uint8 (quint8) or int8 (qint8) codes, got " + dtype_name(xq.dtype()));
  check<TypeError>(wq.dtype() == DType::Int8, arg(fn, "wq") + " must hold int8 (qint8) codes, got " + dtype_name(wq.dtype()));
}

void common_params_device(const char* fn, const Tensor& xq, const Tensor& bias, const Tensor& out_scale,
                          const Tensor& out_zp) {
  if (bias.defined()) common_device(fn, {&xq, &bias});
  if (out_scale.defined()) common_device(fn, {&xq, &out_scale});
  if (out_zp.defined()) common_device(fn, {&xq, &out_zp});
}

}  // namespace

Tensor qmatmul(const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq, const Tensor& w_scale,
               const Tensor& w_zp, const Tensor& bias, const Tensor& out_scale, const Tensor& out_zp,
               const std::string& out_qdtype, cpu::QWeightCache* packed) {
  const char* fn = "qmatmul";
  common_device(fn, {&xq, &x_scale, &x_zp, &wq, &w_scale, &w_zp});
  common_params_device(fn, xq, bias, out_scale, out_zp);
  check_codes(fn, xq, wq);
  check(xq.ndim() >= 1, arg(fn, "xq") + " must have shape (..., K), got a 0-d tensor");
  check(wq.ndim() == 2, arg(fn, "wq") + " must have shape (N, K) like a Linear weight, got " + shape_str(wq.shape()));
  int64_t K = xq.shape().back(), N = wq.size(0);
  check(wq.size(1) == K, std::string(fn) + "(): shapes do not match: 'xq' " + shape_str(xq.shape()) +
                             " has K = " + std::to_string(K) + " but 'wq' " + shape_str(wq.shape()) +
                             " has K = " + std::to_string(wq.size(1)) + "; expected wq of shape (N, " +
                             std::to_string(K) + ")");
  check_k(fn, K);
  QProduct q = product_params(fn, xq, x_scale, x_zp, N, w_scale, w_zp, bias, out_scale, out_zp, out_qdtype);
  Shape out_shape = xq.shape();
  out_shape.back() = N;
  if (xq.device() == Device::GPU) {
    Tensor acc = gpu::qmatmul_accumulate(xq, q.zx, wq, gpu_tensor(q.zw, DType::Int32),
                                         q.bias() ? gpu_tensor(q.bias_q, DType::Int32) : Tensor());
    if (!q.quantized_out) return gpu::qmatmul_to_float(acc, gpu_tensor(q.sxw, DType::Float32));
    return gpu::qmatmul_requantize(acc, gpu_tensor(q.mult, DType::Float32), q.zy, q.ob.lo, q.ob.hi, q.og.storage);
  }
  Tensor xc = contiguous(xq), wc = contiguous(wq);
  Tensor out = Tensor::empty_cpu(out_shape, q.out_dtype());
  cpu::qmatmul(xc, q.zx, wc, q.zw.data(), q.bias(), q.scale(), q.zy, q.ob, out, packed);
  return out;
}

QPackedWeight qmatmul_prepack(const Tensor& wq) {
  const char* fn = "prepack_weight";
  check<TypeError>(wq.dtype() == DType::Int8, arg(fn, "wq") + " must hold int8 (qint8) codes, got " + dtype_name(wq.dtype()));
  check(wq.ndim() == 2, arg(fn, "wq") + " must have shape (N, K) like a Linear weight, got " + shape_str(wq.shape()));
  check_k(fn, wq.size(1));
  if (wq.device() == Device::GPU) return {wq, nullptr};  // MLX arrays are values: nothing can change them
  return {clone(wq), cpu::make_qweight_cache()};
}

// -------------------------------------------------------------- qconv2d ----

Tensor qconv2d(const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq, const Tensor& w_scale,
               const Tensor& w_zp, const Tensor& bias, const std::vector<int64_t>& stride,
               const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups,
               const Tensor& out_scale, const Tensor& out_zp, const std::string& out_qdtype) {
  const char* fn = "qconv2d";
  common_device(fn, {&xq, &x_scale, &x_zp, &wq, &w_scale, &w_zp});
  common_params_device(fn, xq, bias, out_scale, out_zp);
  check_codes(fn, xq, wq);
  check(xq.ndim() == 4, arg(fn, "xq") + " must have shape (N, C, H, W), got " + shape_str(xq.shape()));
  check(wq.ndim() == 4, arg(fn, "wq") + " must have shape (out_channels, in_channels / groups, kh, kw), got " +
                            shape_str(wq.shape()));
  auto pair = [&](const std::vector<int64_t>& v, const char* name, int64_t lo) {
    check(v.size() == 2 && v[0] >= lo && v[1] >= lo,
          arg(fn, name) + " must be two integers >= " + std::to_string(lo) + ", got " + ints_str(v));
  };
  pair(stride, "stride", 1);
  pair(padding, "padding", 0);
  pair(dilation, "dilation", 1);
  check(groups >= 1, arg(fn, "groups") + " must be positive, got " + std::to_string(groups));
  const int64_t C = xq.size(1), O = wq.size(0);
  check(C % groups == 0 && O % groups == 0 && wq.size(1) * groups == C,
        std::string(fn) + "(): shapes do not match: 'xq' " + shape_str(xq.shape()) + " and 'wq' " +
            shape_str(wq.shape()) + " with groups = " + std::to_string(groups) +
            "; expected in_channels = wq.shape[1] * groups and out_channels divisible by groups");
  check(wq.numel() > 0, arg(fn, "wq") + " must not be empty, got shape " + shape_str(wq.shape()));
  Window2d win;
  win.kh = wq.size(2), win.kw = wq.size(3);
  win.sh = stride[0], win.sw = stride[1], win.ph = padding[0], win.pw = padding[1];
  win.dh = dilation[0], win.dw = dilation[1];
  const int64_t span_h = xq.size(2) + 2 * win.ph - win.dh * (win.kh - 1);
  const int64_t span_w = xq.size(3) + 2 * win.pw - win.dw * (win.kw - 1);
  check(span_h >= 1 && span_w >= 1, std::string(fn) + "(): input of shape " + shape_str(xq.shape()) +
                                        " (padded by " + ints_str(padding) + ") is smaller than the dilated kernel");
  win.oh = (span_h - 1) / win.sh + 1;
  win.ow = (span_w - 1) / win.sw + 1;
  check_k(fn, wq.size(1) * win.kh * win.kw);
  QProduct q = product_params(fn, xq, x_scale, x_zp, O, w_scale, w_zp, bias, out_scale, out_zp, out_qdtype);
  const Shape out_shape{xq.size(0), O, win.oh, win.ow};
  if (xq.device() == Device::GPU) {
    // An empty batch: MLX cannot reshape empty arrays, and there is nothing to compute.
    if (xq.size(0) == 0) return full(out_shape, 0.0, q.out_dtype(), Device::GPU);
    return gpu::qconv2d(xq, q.zx, wq, gpu_tensor(q.zw, DType::Int32),
                        q.bias() ? gpu_tensor(q.bias_q, DType::Int32) : Tensor(),
                        gpu_tensor(q.quantized_out ? q.mult : q.sxw, DType::Float32), q.quantized_out, q.zy,
                        q.ob.lo, q.ob.hi, q.og.storage, win, groups);
  }
  Tensor xc = contiguous(xq), wc = contiguous(wq);
  Tensor out = Tensor::empty_cpu(out_shape, q.out_dtype());
  cpu::qconv2d(xc, q.zx, wc, q.zw.data(), q.bias(), q.scale(), q.zy, q.ob, win, groups, out);
  return out;
}

}  // namespace lucid::ops
