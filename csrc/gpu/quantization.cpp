#include "gpu/quantization.h"

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

Tensor pack_int4(const Tensor& codes, int64_t outer, int64_t len, int64_t inner, const Shape& out_shape) {
  auto s = stream();
  int o = static_cast<int>(outer), l = static_cast<int>(len), in = static_cast<int>(inner);
  // Reinterpret int8 codes as their two's complement bytes, keep the low nibble.
  mx::array c = mx::bitwise_and(mx::astype(array_of(codes), mx::uint8, s), mx::array(0x0f, mx::uint8), s);
  c = mx::reshape(c, {o, l, in}, s);
  if (l % 2) c = mx::concatenate({c, mx::zeros({o, 1, in}, mx::uint8, s)}, 1, s);
  int half = (l + 1) / 2;
  c = mx::reshape(c, {o, half, 2, in}, s);
  mx::array even = mx::slice(c, {0, 0, 0, 0}, {o, half, 1, in}, s);
  mx::array odd = mx::slice(c, {0, 0, 1, 0}, {o, half, 2, in}, s);
  mx::array b = mx::bitwise_or(even, mx::left_shift(odd, mx::array(4, mx::uint8), s), s);
  return wrap(mx::reshape(b, to_mx_shape(out_shape), s));
}

Tensor unpack_int4(const Tensor& packed, int64_t outer, int64_t len, int64_t inner, DType out,
                   const Shape& out_shape) {
  auto s = stream();
  int o = static_cast<int>(outer), l = static_cast<int>(len), in = static_cast<int>(inner);
  int half = (l + 1) / 2;
  mx::array p = mx::reshape(array_of(packed), {o, half, 1, in}, s);
  mx::array lo = mx::bitwise_and(p, mx::array(0x0f, mx::uint8), s);
  mx::array hi = mx::right_shift(p, mx::array(4, mx::uint8), s);
  mx::array n = mx::reshape(mx::concatenate({lo, hi}, 2, s), {o, 2 * half, in}, s);
  n = mx::slice(n, {0, 0, 0}, {o, l, in}, s);
  if (out == DType::Int8) {  // sign-extend the nibble: (n ^ 8) - 8
    mx::array w = mx::bitwise_xor(mx::astype(n, mx::int16, s), mx::array(8, mx::int16), s);
    n = mx::astype(mx::subtract(w, mx::array(8, mx::int16), s), mx::int8, s);
  }
  return wrap(mx::reshape(n, to_mx_shape(out_shape), s));
}

Tensor qmatmul_accumulate(const Tensor& x, int32_t zx, const Tensor& w, const Tensor& zw, const Tensor& bias) {
  auto s = stream();
  const mx::array& xa = array_of(x);
  const mx::array& wa = array_of(w);
  int K = wa.shape(1), N = wa.shape(0);
  mx::Shape out_shape = xa.shape();
  out_shape.back() = N;
  // Rows of the flattened (M, K) activation; with K = 0 they come from the shape.
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < out_shape.size(); ++i) rows *= out_shape[i];
  int M = static_cast<int>(rows);
  // Centered operands |x - zx|, |w - zw| <= 255 are exact in float32. MLX
  // matmul is float-only, so K is cut into blocks of 256: every partial sum
  // inside a block is an integer below 256 * 255 * 255 < 2^24, hence exact in
  // float32 in any order; block results are converted and summed in int32.
  mx::array xc = mx::subtract(mx::reshape(mx::astype(xa, mx::float32, s), {M, K}, s),
                              mx::array(static_cast<float>(zx)), s);
  mx::array wc = mx::subtract(mx::astype(wa, mx::float32, s),
                              mx::reshape(mx::astype(array_of(zw), mx::float32, s), {N, 1}, s), s);
  constexpr int kBlock = 256;
  mx::array acc = mx::zeros({M, N}, mx::int32, s);
  for (int k0 = 0; k0 < K; k0 += kBlock) {
    int k1 = std::min(K, k0 + kBlock);
    mx::array xb = mx::slice(xc, {0, k0}, {M, k1}, s);
    mx::array wb = mx::slice(wc, {0, k0}, {N, k1}, s);
    mx::array part = matmul_checked(xb, mx::transpose(wb, {1, 0}, s), s);
    acc = mx::add(acc, mx::astype(part, mx::int32, s), s);
  }
  // int32 addition wraps, as on the CPU stream.
  if (bias.defined()) acc = mx::add(acc, mx::reshape(array_of(bias), {1, N}, s), s);
  return wrap(mx::reshape(acc, out_shape, s));
}

Tensor qmatmul_to_float(const Tensor& acc, const Tensor& scale) {
  auto s = stream();
  return wrap(mx::multiply(mx::astype(array_of(acc), mx::float32, s), array_of(scale), s));
}

Tensor qmatmul_requantize(const Tensor& acc, const Tensor& mult, int32_t zy, float lo, float hi, DType out) {
  auto s = stream();
  mx::array t = mx::multiply(mx::astype(array_of(acc), mx::float32, s), array_of(mult), s);
  mx::array v = mx::add(mx::round(t, 0, s), mx::array(static_cast<float>(zy)), s);
  mx::array c = mx::clip(v, scalar_f32(lo), scalar_f32(hi), s);
  return wrap(mx::astype(c, to_mx(out), s));
}

Tensor qconv2d(const Tensor& x, int32_t zx, const Tensor& w, const Tensor& zw, const Tensor& bias, const Tensor& scale,
               bool quantized_out, int32_t zy, float lo, float hi, DType out, const Window2d& win, int64_t groups) {
  auto s = stream();
  const mx::array& xa = array_of(x);
  const int N = xa.shape(0), C = xa.shape(1);
  const int O = array_of(w).shape(0), cg = C / static_cast<int>(groups), og = O / static_cast<int>(groups);
  const int kh = win.kh, kw = win.kw, oh = win.oh, ow = win.ow, P = oh * ow, K = cg * kh * kw;
  // Padding holds the zero point's code, so it contributes (zx - zx) * w = 0.
  mx::array xp = mx::pad(xa, {{0, 0}, {0, 0}, {int(win.ph), int(win.ph)}, {int(win.pw), int(win.pw)}},
                         mx::array(zx, xa.dtype()), "constant", s);
  mx::array wa = mx::reshape(array_of(w), {O, K}, s);
  std::vector<mx::array> outs;
  for (int g = 0; g < groups; ++g) {
    // Patches (N * P, K), K ordered (channel, kernel row, kernel column) like w.
    std::vector<mx::array> taps;
    for (int i = 0; i < kh; ++i)
      for (int j = 0; j < kw; ++j) {
        int y0 = i * int(win.dh), x0 = j * int(win.dw);
        taps.push_back(mx::slice(xp, {0, g * cg, y0, x0},
                                 {N, (g + 1) * cg, y0 + (oh - 1) * int(win.sh) + 1, x0 + (ow - 1) * int(win.sw) + 1},
                                 {1, 1, int(win.sh), int(win.sw)}, s));
      }
    mx::array patches = mx::reshape(mx::stack(taps, 2, s), {N, K, P}, s);  // (N, cg, kh*kw, oh, ow)
    patches = mx::reshape(mx::transpose(patches, {0, 2, 1}, s), {N * P, K}, s);
    Tensor wg = wrap(mx::slice(wa, {g * og, 0}, {(g + 1) * og, K}, s));
    Tensor zg = wrap(mx::slice(array_of(zw), {g * og}, {(g + 1) * og}, s));
    Tensor bg = bias.defined() ? wrap(mx::slice(array_of(bias), {g * og}, {(g + 1) * og}, s)) : Tensor();
    Tensor sg = wrap(mx::slice(array_of(scale), {g * og}, {(g + 1) * og}, s));
    Tensor acc = qmatmul_accumulate(wrap(patches), zx, wg, zg, bg);
    Tensor y = quantized_out ? qmatmul_requantize(acc, sg, zy, lo, hi, out) : qmatmul_to_float(acc, sg);
    outs.push_back(mx::reshape(array_of(y), {N, P, og}, s));
  }
  mx::array y = outs.size() == 1 ? outs[0] : mx::concatenate(outs, 2, s);
  return wrap(mx::reshape(mx::transpose(y, {0, 2, 1}, s), {N, O, oh, ow}, s));
}

}  // namespace lucid::gpu
