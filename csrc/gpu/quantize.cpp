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

// ---- float grids -----------------------------------------------------------
// The float grids on the GPU stream: minifloat::encode / decode (core/
// minifloat.h) composed from MLX's elementwise uint32 ops, operation for
// operation (shifts, masks, compares and selects on the float32 bit
// patterns; the only float operations are the division x / scale, the exact
// subnormal product m * 2^k and the final multiply by the scale, each one
// correctly rounded IEEE operation). MLX has no FP8 / FP4 conversion of its
// own on every backend, and its to-FP8 cast is not specified for ties and
// overflow, so the bits are built here rather than taken from a cast.
namespace {

mx::array mf_u32(uint32_t v) { return mx::array(v, mx::uint32); }

mx::array mf_params(const Tensor& p, const Shape& view) {
  auto s = stream();
  return mx::reshape(mx::astype(array_of(p), mx::float32, s), to_mx_shape(view), s);
}

// minifloat::shift_round_even, elementwise (1 <= sh <= 31).
mx::array mf_shift_round_even(const mx::array& v, const mx::array& sh) {
  auto s = stream();
  mx::array q = mx::right_shift(v, sh, s);
  mx::array rem = mx::subtract(v, mx::left_shift(q, sh, s), s);
  mx::array half = mx::left_shift(mf_u32(1), mx::subtract(sh, mf_u32(1), s), s);
  mx::array odd = mx::equal(mx::bitwise_and(q, mf_u32(1), s), mf_u32(1), s);
  mx::array up = mx::logical_or(mx::greater(rem, half, s), mx::logical_and(mx::equal(rem, half, s), odd, s), s);
  return mx::add(q, mx::astype(up, mx::uint32, s), s);
}

}  // namespace

Tensor quantize_minifloat(const Tensor& x, const Tensor& scale, const Shape& x_view, const Shape& p_view,
                          const minifloat::Format& f, bool saturate) {
  auto s = stream();
  mx::array xf = mx::reshape(mx::astype(array_of(x), mx::float32, s), to_mx_shape(x_view), s);
  // + 0: the zero point, added in float as on the CPU stream (-0 -> +0).
  mx::array t = mx::add(mx::divide(xf, mf_params(scale, p_view), s), mx::array(0.0f, mx::float32), s);
  mx::array u = mx::view(t, mx::uint32, s);
  mx::array sign = mx::left_shift(mx::right_shift(u, mf_u32(31), s), mf_u32(static_cast<uint32_t>(f.sign_shift())), s);
  mx::array a = mx::bitwise_and(u, mf_u32(0x7fffffffu), s);
  const uint32_t e_norm = static_cast<uint32_t>(128 - f.bias), shn = static_cast<uint32_t>(23 - f.mbits);
  mx::array E = mx::right_shift(a, mf_u32(23), s);
  mx::array normal = mx::greater_equal(E, mf_u32(e_norm), s);
  // Normal branch: exponent rebiased in place (wraps harmlessly where unselected).
  mx::array vn = mx::subtract(a, mf_u32((e_norm - 1u) << 23), s);
  // Subnormal branch: significand with its implicit bit, shifted further by
  // the distance below the smallest normal, capped at 31.
  mx::array has_e = mx::greater(E, mf_u32(0), s);
  mx::array sig = mx::bitwise_or(mx::bitwise_and(a, mf_u32(0x7fffffu), s),
                                 mx::where(has_e, mf_u32(0x800000u), mf_u32(0), s), s);
  mx::array Eeff = mx::maximum(E, mf_u32(1), s);
  mx::array below = mx::subtract(mf_u32(e_norm), mx::minimum(Eeff, mf_u32(e_norm), s), s);
  mx::array shs = mx::minimum(mx::add(below, mf_u32(shn), s), mf_u32(31), s);
  mx::array code = mf_shift_round_even(mx::where(normal, vn, sig, s), mx::where(normal, mf_u32(shn), shs, s));
  const uint32_t over = saturate ? f.max_code : (f.inf_code ? f.inf_code : (f.nan_code ? f.nan_code : f.max_code));
  code = mx::where(mx::greater(code, mf_u32(f.max_code), s), mf_u32(over), code, s);
  const uint32_t nan = f.nan_code ? f.nan_code : f.max_code;
  code = mx::where(mx::greater(a, mf_u32(0x7f800000u), s), mf_u32(nan), code, s);
  mx::array q = mx::astype(mx::bitwise_or(sign, code, s), mx::uint8, s);
  return wrap(mx::reshape(q, to_mx_shape(x.shape()), s));
}

Tensor dequantize_minifloat(const Tensor& q, const Tensor& scale, const Shape& x_view, const Shape& p_view,
                            const minifloat::Format& f, DType out) {
  auto s = stream();
  mx::array c = mx::reshape(mx::astype(array_of(q), mx::uint32, s), to_mx_shape(x_view), s);
  const uint32_t ss = static_cast<uint32_t>(f.sign_shift());
  mx::array sign = mx::left_shift(mx::bitwise_and(mx::right_shift(c, mf_u32(ss), s), mf_u32(1), s), mf_u32(31), s);
  mx::array e = mx::bitwise_and(mx::right_shift(c, mf_u32(static_cast<uint32_t>(f.mbits)), s),
                                mf_u32((1u << f.ebits) - 1u), s);
  mx::array m = mx::bitwise_and(c, mf_u32((1u << f.mbits) - 1u), s);
  mx::array mag = mx::bitwise_and(c, mf_u32((1u << ss) - 1u), s);
  mx::array nbits = mx::bitwise_or(mx::left_shift(mx::add(e, mf_u32(static_cast<uint32_t>(127 - f.bias)), s), mf_u32(23), s),
                                   mx::left_shift(m, mf_u32(static_cast<uint32_t>(23 - f.mbits)), s), s);
  const float step = minifloat::float_of(static_cast<uint32_t>(127 + 1 - f.bias - f.mbits) << 23);
  mx::array sub = mx::view(mx::multiply(mx::astype(m, mx::float32, s), mx::array(step, mx::float32), s), mx::uint32, s);
  mx::array bits = mx::where(mx::equal(e, mf_u32(0), s), sub, nbits, s);
  if (f.inf_code) bits = mx::where(mx::equal(mag, mf_u32(f.inf_code), s), mf_u32(0x7f800000u), bits, s);
  if (f.nan_code) {
    const uint32_t first_nan = f.inf_code ? f.inf_code + 1u : f.nan_code;
    bits = mx::where(mx::greater_equal(mag, mf_u32(first_nan), s), mf_u32(0x7fc00000u), bits, s);
  }
  mx::array v = mx::view(mx::bitwise_or(sign, bits, s), mx::float32, s);
  mx::array y = mx::multiply(v, mf_params(scale, p_view), s);
  return wrap(mx::reshape(mx::astype(y, to_mx(out), s), to_mx_shape(q.shape()), s));
}

}  // namespace lucid::gpu
