#include "ops/fake_quantize_learnable.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

#include "core/errors.h"
#include "cpu/fake_quantize_learnable.h"
#include "gpu/fake_quantize_learnable.h"
#include "gpu/transfer.h"
#include "ops/copy.h"

namespace lucid::ops {

namespace {

// Codes must be exact in float32, so every step of the formulas is exact where
// the contract says so.
constexpr int64_t kMaxCode = int64_t{1} << 24;

std::string arg(const char* fn, const char* name) { return std::string(fn) + "(): argument '" + name + "'"; }

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

struct Setup {
  cpu::LearnableView view;
  Shape x_view, p_view;
  std::vector<float> scale, zp;  // one per channel, as given
  float lo = 0, hi = 0;
};

std::vector<float> host_floats(const char* fn, const char* name, const Tensor& t, int64_t count, bool positive) {
  check<TypeError>(t.dtype() == DType::Float32 || t.dtype() == DType::Float16 || t.dtype() == DType::BFloat16,
                   arg(fn, name) + " must be a floating tensor, got " + dtype_name(t.dtype()));
  check(t.ndim() <= 1 && t.numel() == count,
        arg(fn, name) + " must hold " + std::to_string(count) + (count == 1 ? " value" : " values (one per channel)") +
            " in a 0-d or 1-d tensor, got shape " + shape_str(t.shape()));
  Tensor h = t.device() == Device::CPU ? t : to_device(t, Device::CPU);
  h = contiguous(h.dtype() == DType::Float32 ? h : astype(h, DType::Float32));
  std::vector<float> v(h.data<float>(), h.data<float>() + count);
  for (float f : v) {
    bool ok = std::isfinite(f) && (!positive || f > 0.0f);
    if (!ok) throw ValueError(arg(fn, name) + (positive ? " must be finite and > 0, got " : " must be finite, got ") + fmt(f));
  }
  return v;
}

Setup setup(const char* fn, const Tensor& x, const Tensor& scale, const Tensor& zero_point, int64_t quant_min,
            int64_t quant_max, std::optional<int64_t> ch_axis) {
  common_device(fn, {&x, &scale, &zero_point});
  check<TypeError>(x.dtype() == DType::Float32, arg(fn, "x") + " must be float32, got " + dtype_name(x.dtype()));
  check(quant_min <= 0 && quant_max >= 0 && quant_min < quant_max,
        std::string(fn) + "(): expected quant_min <= 0 <= quant_max and quant_min < quant_max, got quant_min=" +
            std::to_string(quant_min) + ", quant_max=" + std::to_string(quant_max));
  check(quant_min >= -kMaxCode && quant_max <= kMaxCode,
        std::string(fn) + "(): quant_min and quant_max must lie in [-2^24, 2^24], got " + std::to_string(quant_min) +
            " and " + std::to_string(quant_max));
  Setup S;
  const Shape& xs = x.shape();
  int nd = static_cast<int>(xs.size());
  S.view.outer = x.numel();
  if (ch_axis) {
    int64_t a = *ch_axis;
    check(nd > 0 && a >= -nd && a < nd, arg(fn, "ch_axis") + " is out of range for a " + std::to_string(nd) +
                                            "-d input: expected an axis in [" + std::to_string(-nd) + ", " +
                                            std::to_string(nd - 1) + "], got " + std::to_string(a));
    int ax = static_cast<int>(a < 0 ? a + nd : a);
    S.view.outer = 1;
    S.view.inner = 1;
    for (int i = 0; i < ax; ++i) S.view.outer *= xs[i];
    for (int i = ax + 1; i < nd; ++i) S.view.inner *= xs[i];
    S.view.channels = xs[ax];
  } else {
    S.view.outer = 1;
    S.view.channels = 1;
    S.view.inner = x.numel();
  }
  S.x_view = {S.view.outer, S.view.channels, S.view.inner};
  S.p_view = {1, S.view.channels, 1};
  S.scale = host_floats(fn, "scale", scale, S.view.channels, true);
  S.zp = host_floats(fn, "zero_point", zero_point, S.view.channels, false);
  S.lo = static_cast<float>(quant_min);
  S.hi = static_cast<float>(quant_max);
  return S;
}

float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

std::vector<float> reciprocals(const std::vector<float>& s) {
  std::vector<float> r(s.size());
  for (size_t i = 0; i < s.size(); ++i) r[i] = 1.0f / s[i];
  return r;
}

Tensor host_tensor(const std::vector<float>& v, const Shape& shape) {
  Tensor t = Tensor::empty_cpu(shape, DType::Float32);
  if (!v.empty()) std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(float));
  return t;
}

Tensor on_device(const std::vector<float>& v, Device d, const Shape& shape) {
  Tensor t = host_tensor(v, shape);
  return d == Device::GPU ? gpu::upload(t) : t;
}

}  // namespace

Tensor fake_quantize_learnable(const Tensor& x, const Tensor& scale, const Tensor& zero_point, int64_t quant_min,
                               int64_t quant_max, std::optional<int64_t> ch_axis) {
  const char* fn = "fake_quantize_learnable";
  Setup S = setup(fn, x, scale, zero_point, quant_min, quant_max, ch_axis);
  // Forward zero point: clamp(rint(z)), as torch's forward rounds it.
  std::vector<float> zf(S.zp.size());
  for (size_t i = 0; i < zf.size(); ++i) zf[i] = clampf(std::nearbyint(S.zp[i]), S.lo, S.hi);
  std::vector<float> inv = reciprocals(S.scale);
  if (x.device() == Device::GPU) {
    Shape c = {S.view.channels};
    return gpu::fake_quantize_learnable(x, on_device(S.scale, Device::GPU, c), on_device(inv, Device::GPU, c),
                                        on_device(zf, Device::GPU, c), S.x_view, S.p_view, S.lo, S.hi);
  }
  Tensor xc = contiguous(x);
  Tensor y = Tensor::empty_cpu(x.shape(), DType::Float32);
  cpu::fake_quantize_learnable(xc.data<float>(), y.data<float>(), S.view, S.scale.data(), inv.data(), zf.data(), S.lo,
                               S.hi);
  return y;
}

std::tuple<Tensor, Tensor, Tensor> fake_quantize_learnable_backward(const Tensor& dy, const Tensor& x,
                                                                     const Tensor& scale, const Tensor& zero_point,
                                                                     int64_t quant_min, int64_t quant_max,
                                                                     std::optional<int64_t> ch_axis,
                                                                     double grad_factor) {
  const char* fn = "fake_quantize_learnable_backward";
  common_device(fn, {&dy, &x});
  check<TypeError>(dy.dtype() == DType::Float32, arg(fn, "grad") + " must be float32, got " + dtype_name(dy.dtype()));
  check(dy.shape() == x.shape(), arg(fn, "grad") + " has shape " + shape_str(dy.shape()) + " but x has shape " +
                                     shape_str(x.shape()));
  check(std::isfinite(grad_factor), arg(fn, "grad_factor") + " must be finite, got " + fmt(grad_factor));
  Setup S = setup(fn, x, scale, zero_point, quant_min, quant_max, ch_axis);
  // Backward zero point: per-tensor trunc(clamp(z + 0.5)), per-channel clamp(rint(z)) (torch's two rules).
  std::vector<float> zb(S.zp.size());
  for (size_t i = 0; i < zb.size(); ++i)
    zb[i] = ch_axis ? clampf(std::nearbyint(S.zp[i]), S.lo, S.hi) : std::trunc(clampf(S.zp[i] + 0.5f, S.lo, S.hi));
  std::vector<float> inv = reciprocals(S.scale);
  const float gf = static_cast<float>(grad_factor);
  const int64_t n = x.numel();
  Tensor dx, ds_terms, dz_terms;
  if (x.device() == Device::GPU) {
    Shape c = {S.view.channels};
    auto [gdx, gds, gdz] = gpu::fake_quantize_learnable_terms(
        x, dy, on_device(S.scale, Device::GPU, c), on_device(inv, Device::GPU, c), on_device(zb, Device::GPU, c),
        S.x_view, S.p_view, S.lo, S.hi, gf);
    dx = gdx;
    // The sums run on the host, in one fixed order, for both streams.
    ds_terms = contiguous(gpu::download(gds));
    dz_terms = contiguous(gpu::download(gdz));
  } else {
    Tensor xc = contiguous(x), gc = contiguous(dy);
    dx = Tensor::empty_cpu(x.shape(), DType::Float32);
    ds_terms = Tensor::empty_cpu(x.shape(), DType::Float32);
    dz_terms = Tensor::empty_cpu(x.shape(), DType::Float32);
    if (n > 0)
      cpu::fake_quantize_learnable_terms(xc.data<float>(), gc.data<float>(), dx.data<float>(), ds_terms.data<float>(),
                                         dz_terms.data<float>(), S.view, S.scale.data(), inv.data(), zb.data(), S.lo,
                                         S.hi, gf);
  }
  std::vector<float> ds(S.view.channels, 0.0f), dz(S.view.channels, 0.0f);
  if (n > 0) {
    cpu::sum_per_channel(ds_terms.data<float>(), S.view, ds.data());
    cpu::sum_per_channel(dz_terms.data<float>(), S.view, dz.data());
  }
  return {dx, on_device(ds, x.device(), scale.shape()), on_device(dz, x.device(), zero_point.shape())};
}

}  // namespace lucid::ops
