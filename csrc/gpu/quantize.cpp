#include "gpu/quantize.h"

#include <limits>

#include "core/errors.h"
#include "gpu/array.h"

namespace lucid::gpu {

namespace {

mx::array params(const Tensor& p, const Shape& view, mx::Dtype dt) {
  auto s = stream();
  return mx::reshape(mx::astype(array_of(p), dt, s), to_mx_shape(view), s);
}

mx::array scalar_f32(float v) { return mx::array(v, mx::float32); }

// t = x / s and the clamped, NaN-mapped code value c (still float).
struct Quantized {
  mx::array t, v, c;
};

Quantized quantize_float(const mx::array& x, const mx::array& sc, const mx::array& zf, float lo, float hi) {
  auto s = stream();
  // Divide, never multiply by a reciprocal (NUMERICS.md, trap 1); MLX's
  // round with 0 decimals rounds half to even.
  mx::array t = mx::divide(x, sc, s);
  mx::array v = mx::add(mx::round(t, 0, s), zf, s);
  mx::array c = mx::clip(v, scalar_f32(lo), scalar_f32(hi), s);
  // The NaN lane is chosen from t, not from the clipped value, so the result
  // does not depend on how clip treats NaN. It holds lo, a value every cast
  // takes; callers put z (quantize) or NaN (fake_quantize) there afterwards,
  // since float(z) may be 2^31, outside int32.
  c = mx::where(mx::isnan(t, s), scalar_f32(lo), c, s);
  return {t, v, c};
}

// 0x7fc00000 (float32), 0x7e00 (float16), 0x7fc0 (bfloat16).
mx::array canonical_nan(DType dt) {
  auto s = stream();
  if (dt == DType::Float16) return mx::view(mx::array(static_cast<uint16_t>(0x7e00), mx::uint16), mx::float16, s);
  if (dt == DType::BFloat16) return mx::view(mx::array(static_cast<uint16_t>(0x7fc0), mx::uint16), mx::bfloat16, s);
  return mx::view(mx::array(static_cast<uint32_t>(0x7fc00000u), mx::uint32), mx::float32, s);
}

}  // namespace

Tensor quantize(const Tensor& x, const Tensor& scale, const Tensor& zp, const Shape& x_view, const Shape& p_view,
                float lo, float hi, DType storage) {
  auto s = stream();
  mx::array xf = mx::reshape(mx::astype(array_of(x), mx::float32, s), to_mx_shape(x_view), s);
  mx::array sc = params(scale, p_view, mx::float32);
  mx::array zi = params(zp, p_view, mx::int32);
  mx::array zf = mx::astype(zi, mx::float32, s);
  Quantized r = quantize_float(xf, sc, zf, lo, hi);
  // NaN -> z, in the integer domain (exact for every zero point).
  mx::array q = mx::where(mx::isnan(r.t, s), mx::astype(zi, to_mx(storage), s), mx::astype(r.c, to_mx(storage), s), s);
  return wrap(mx::reshape(q, to_mx_shape(x.shape()), s));
}

Tensor dequantize(const Tensor& q, const Tensor& scale, const Tensor& zp, const Shape& x_view, const Shape& p_view,
                  DType out) {
  auto s = stream();
  // q - z exactly: int32 for codes up to 16 bits, int64 for wider ones.
  mx::Dtype diff = itemsize(q.dtype()) >= 4 ? mx::int64 : mx::int32;
  mx::array qi = mx::reshape(mx::astype(array_of(q), diff, s), to_mx_shape(x_view), s);
  mx::array z = params(zp, p_view, diff);
  if (itemsize(q.dtype()) == 8) {
    // Saturating q - z for int64 codes, as on the CPU stream: clamp q to
    // [INT64_MIN + max(z, 0), INT64_MAX + min(z, 0)] first (docs/numerics.md).
    mx::array zero(int64_t{0}), i64min(std::numeric_limits<int64_t>::min()), i64max(std::numeric_limits<int64_t>::max());
    mx::array qlo = mx::add(i64min, mx::maximum(z, zero, s), s);
    mx::array qhi = mx::add(i64max, mx::minimum(z, zero, s), s);
    qi = mx::minimum(mx::maximum(qi, qlo, s), qhi, s);
  }
  mx::array d = mx::subtract(qi, z, s);
  mx::array y = mx::multiply(mx::astype(d, mx::float32, s), params(scale, p_view, mx::float32), s);
  return wrap(mx::reshape(mx::astype(y, to_mx(out), s), to_mx_shape(q.shape()), s));
}

std::pair<Tensor, Tensor> fake_quantize(const Tensor& x, const Tensor& scale, const Tensor& zp, const Shape& x_view,
                                        const Shape& p_view, float lo, float hi, bool wide) {
  auto s = stream();
  mx::Shape shape = to_mx_shape(x.shape());
  mx::array xf = mx::reshape(mx::astype(array_of(x), mx::float32, s), to_mx_shape(x_view), s);
  mx::array sc = params(scale, p_view, mx::float32);
  mx::array zi = params(zp, p_view, mx::int32);
  mx::array zf = mx::astype(zi, mx::float32, s);
  Quantized r = quantize_float(xf, sc, zf, lo, hi);
  // STE mask from the pre-clamp value; NaN and +-inf compare false.
  mx::array mask = mx::logical_and(mx::greater_equal(r.v, scalar_f32(lo), s), mx::less_equal(r.v, scalar_f32(hi), s), s);
  mx::Dtype diff = wide ? mx::int64 : mx::int32;
  mx::array d = mx::subtract(mx::astype(mx::astype(r.c, mx::int32, s), diff, s), mx::astype(zi, diff, s), s);
  mx::array y = mx::multiply(mx::astype(d, mx::float32, s), sc, s);
  // NaN propagates as the canonical quiet NaN of the output type, as on the
  // CPU stream. It is selected after the narrowing cast and built from its
  // bits: MLX's CPU backend narrows a float32 NaN to float16 as 0x7d00.
  y = mx::astype(y, to_mx(x.dtype()), s);
  y = mx::where(mx::isnan(r.t, s), canonical_nan(x.dtype()), y, s);
  return {wrap(mx::reshape(y, shape, s)), wrap(mx::reshape(mask, shape, s))};
}

Tensor masked_grad(const Tensor& dy, const Tensor& mask) {
  auto s = stream();
  const mx::array& g = array_of(dy);
  return wrap(mx::where(mx::astype(array_of(mask), mx::bool_, s), g, mx::array(0.0f, g.dtype()), s));
}

}  // namespace lucid::gpu
