#include "ops/qparams.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "core/errors.h"
#include "gpu/transfer.h"
#include "ops/copy.h"

namespace lucid::ops::quant_detail {

Grid grid_of(const std::string& name, const char* fn) {
  if (name == "qint8") return {-128, 127, DType::Int8, name};
  if (name == "quint8") return {0, 255, DType::UInt8, name};
  if (name == "qint4") return {-8, 7, DType::Int8, name};
  if (name == "quint4") return {0, 15, DType::UInt8, name};
  if (name == "qint16") return {-32768, 32767, DType::Int16, name};
  // lucid has no uint16 dtype: quint16 codes are stored in int32.
  if (name == "quint16") return {0, 65535, DType::Int32, name};
  if (name == "qint2") return {-2, 1, DType::Int8, name};
  if (name == "quint2") return {0, 3, DType::UInt8, name};
  if (name == "qint32") return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), DType::Int32, name};
  throw TypeError(std::string(fn) + "(): argument 'qdtype' must be one of qint8, quint8, qint4, quint4, qint2, quint2, qint16, quint16, "
                  "qint32 (integer grids), got '" +
                  name + "'");
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

std::string arg(const char* fn, const char* name) { return std::string(fn) + "(): argument '" + name + "'"; }

Tensor host_values(const Tensor& t, DType as) {
  Tensor h = t.device() == Device::CPU ? t : to_device(t, Device::CPU);
  return contiguous(h.dtype() == as ? h : astype(h, as));
}

template <class T>
Tensor host_tensor(const std::vector<T>& v, DType dt) {
  Tensor t = Tensor::empty_cpu({static_cast<int64_t>(v.size())}, dt);
  if (!v.empty()) std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(T));
  return t;
}

template <class T>
Tensor gpu_tensor(const std::vector<T>& v, DType dt) { return gpu::upload(host_tensor(v, dt)); }

template Tensor host_tensor<float>(const std::vector<float>&, DType);
template Tensor host_tensor<int32_t>(const std::vector<int32_t>&, DType);
template Tensor gpu_tensor<float>(const std::vector<float>&, DType);
template Tensor gpu_tensor<int32_t>(const std::vector<int32_t>&, DType);

namespace {

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

}  // namespace

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

QProduct product_params(const char* fn, const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, int64_t N,
                        const Tensor& w_scale, const Tensor& w_zp, const Tensor& bias, const Tensor& out_scale,
                        const Tensor& out_zp, const std::string& out_qdtype) {
  QProduct q;
  Grid xg = xq.dtype() == DType::UInt8 ? grid_of("quint8", fn) : grid_of("qint8", fn);
  if (!(x_scale.numel() == 1))
    throw ValueError(arg(fn, "x_scale") + " must be a number or a one-element tensor, got shape " + shape_str(x_scale.shape()));
  if (!(x_zp.numel() == 1))
    throw ValueError(arg(fn, "x_zp") + " must be an int or a one-element tensor, got shape " + shape_str(x_zp.shape()));
  float sx = read_scale(fn, "x_scale", x_scale, 1)[0];
  q.zx = read_zero_point(fn, "x_zp", x_zp, 1, xg.qmin, xg.qmax, xg.name)[0];
  auto per_n = [&](const Tensor& t, const char* name) {
    if (!(t.numel() == 1 || (t.ndim() == 1 && t.size(0) == N)))
      throw ValueError(arg(fn, name) + " must be a number or have shape (" + std::to_string(N) + ",) (one per output channel), got shape " +
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
    if (!(is_floating(bias.dtype())))
      throw TypeError(arg(fn, "bias") + " must be a floating tensor, got " + dtype_name(bias.dtype()));
    if (!(bias.ndim() == 1 && bias.size(0) == N))
      throw ValueError(arg(fn, "bias") + " must have shape (" + std::to_string(N) + ",), got " +
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
    if (!(out_scale.numel() == 1))
      throw ValueError(arg(fn, "out_scale") + " must be a number or a one-element tensor, got shape " +
                                      shape_str(out_scale.shape()));
    float sy = read_scale(fn, "out_scale", out_scale, 1)[0];
    if (out_zp.defined()) {
      if (!(out_zp.numel() == 1))
        throw ValueError(arg(fn, "out_zp") + " must be an int or a one-element tensor, got shape " +
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
  if (!(K <= kMaxK))
    throw ValueError(std::string(fn) + "(): K = " + std::to_string(K) + " is too large for exact int32 accumulation "
                        "(K * 255 * 255 must stay below 2^31, so K <= " + std::to_string(kMaxK) + ")");
}

void check_codes(const char* fn, const Tensor& xq, const Tensor& wq) {
  if (!(xq.dtype() == DType::UInt8 || xq.dtype() == DType::Int8))
    throw TypeError(arg(fn, "xq") + " must hold uint8 (quint8) or int8 (qint8) codes, got " + dtype_name(xq.dtype()));
  if (!(wq.dtype() == DType::Int8))
    throw TypeError(arg(fn, "wq") + " must hold int8 (qint8) codes, got " + dtype_name(wq.dtype()));
}

void common_params_device(const char* fn, const Tensor& xq, const Tensor& bias, const Tensor& out_scale,
                          const Tensor& out_zp) {
  if (bias.defined()) common_device(fn, {&xq, &bias});
  if (out_scale.defined()) common_device(fn, {&xq, &out_scale});
  if (out_zp.defined()) common_device(fn, {&xq, &out_zp});
}

}  // namespace lucid::ops::quant_detail
