// int4_weight_only_linear on the GPU stream. MLX's quantized_matmul is not
// used: it dequantizes as q * s + b with b = -z * s rounded separately (and
// may contract the multiply-add), so its weights differ from the contract's
// fl(float(q - z) * s) in the last bit. Dequantizing with explicit ops keeps
// the weights equal to the CPU stream's; only the matmul's summation order
// differs (docs/numerics.md, "What is not bit-identical").
#include "gpu/int4_linear.h"

#include <cmath>

#include "gpu/array.h"

namespace lucid::gpu {

namespace {

// q - z for every weight, int32 (N, K / G, G): byte j holds k = 2j, 2j + 1.
mx::array centred_codes(const Tensor& w_packed, const Tensor& zp, int G, bool is_signed) {
  auto s = stream();
  const mx::array& wp = array_of(w_packed);
  const int N = wp.shape(0), K = 2 * wp.shape(1);
  mx::array b = mx::astype(wp, mx::int32, s);
  mx::array lo = mx::bitwise_and(b, mx::array(15, mx::int32), s);
  mx::array hi = mx::right_shift(b, mx::array(4, mx::int32), s);
  mx::array q = mx::reshape(mx::stack({lo, hi}, -1, s), {N, K / G, G}, s);
  if (is_signed) q = mx::subtract(mx::bitwise_xor(q, mx::array(8, mx::int32), s), mx::array(8, mx::int32), s);
  return mx::subtract(q, mx::expand_dims(array_of(zp), -1, s), s);
}

int rows_of(const mx::array& xa) {
  int M = 1;
  for (int d = 0; d + 1 < xa.ndim(); ++d) M *= xa.shape(d);
  return M;
}

}  // namespace

Tensor int4_weight_only_linear(const Tensor& x, const Tensor& w_packed, const Tensor& scale, const Tensor& zp,
                               int64_t group_size, bool is_signed, const Tensor& bias, const Shape& out_shape) {
  auto s = stream();
  const mx::array& wp = array_of(w_packed);
  const int N = wp.shape(0), K = 2 * wp.shape(1), G = static_cast<int>(group_size);
  mx::array d = centred_codes(w_packed, zp, G, is_signed);
  mx::array w = mx::multiply(mx::astype(d, mx::float32, s), mx::expand_dims(array_of(scale), -1, s), s);
  w = mx::reshape(w, {N, K}, s);
  const mx::array& xa = array_of(x);
  const int M = rows_of(xa);
  mx::array y = matmul_checked(mx::reshape(xa, {M, K}, s), mx::transpose(w, s), s);
  if (bias.defined()) y = mx::add(y, mx::astype(array_of(bias), mx::float32, s), s);
  return wrap(mx::reshape(y, to_mx_shape(out_shape), s));
}

Tensor int4_weight_only_linear_qd8(const Tensor& x, const Tensor& w_packed, const Tensor& scale, const Tensor& zp,
                                   int64_t group_size, bool is_signed, const Tensor& bias, const Shape& out_shape) {
  auto s = stream();
  const mx::array& wp = array_of(w_packed);
  const int N = wp.shape(0), K = 2 * wp.shape(1), G = static_cast<int>(group_size), groups = K / G;
  const mx::array& x0 = array_of(x);
  const int M = rows_of(x0);
  if (K == 0 || M == 0 || N == 0) {  // empty sums (and no amax to take): y = bias or 0
    mx::array y = mx::zeros({M, N}, mx::float32, s);
    if (bias.defined()) y = mx::add(y, mx::astype(array_of(bias), mx::float32, s), s);
    return wrap(mx::reshape(y, to_mx_shape(out_shape), s));
  }
  mx::array xa = mx::reshape(x0, {M, K}, s);
  // Per row: finite?, amax, sa = max(fl(amax / 127), 2^-126); non-finite rows
  // are computed on zeros and replaced by NaN at the end.
  mx::array finite = mx::all(mx::isfinite(xa, s), 1, true, s);
  xa = mx::where(finite, xa, mx::array(0.0f), s);
  mx::array amax = mx::max(mx::abs(xa, s), 1, true, s);
  mx::array sa = mx::maximum(mx::divide(amax, mx::array(127.0f), s), mx::array(std::ldexp(1.0f, -126)), s);
  // quantize with z = 0 on [-127, 127] (divide, round half to even, clip).
  mx::array xq = mx::clip(mx::round(mx::divide(xa, sa, s), 0, s), mx::array(-127.0f), mx::array(127.0f), s);
  // Exact group dots: blocks of B <= 8192 k (a divisor of G, a multiple of
  // 32) keep every partial sum an integer below 8192 * 127 * 15 < 2^24.
  int B = G;
  if (B > 8192)
    for (B = 8192; G % B; B -= 32) {
    }
  const int nb = K / B;
  mx::array xb = mx::transpose(mx::reshape(xq, {M, nb, B}, s), {1, 0, 2}, s);  // (nb, M, B)
  mx::array wd = mx::astype(centred_codes(w_packed, zp, G, is_signed), mx::float32, s);
  mx::array wb = mx::transpose(mx::reshape(wd, {N, nb, B}, s), {1, 2, 0}, s);  // (nb, B, N)
  mx::array a = mx::astype(matmul_checked(xb, wb, s), mx::int32, s);              // (nb, M, N), exact
  if (B < G) a = mx::sum(mx::reshape(a, {groups, G / B, M, N}, s), 1, false, s);  // int32: exact
  // t[g] = fl(float(A[g]) * s[n, g]); u = +0, u = fl(u + t[g]) left to right.
  mx::array sg = mx::expand_dims(mx::transpose(array_of(scale), {1, 0}, s), 1, s);  // (groups, 1, N)
  mx::array t = mx::multiply(mx::astype(a, mx::float32, s), sg, s);
  mx::array u = mx::zeros({M, N}, mx::float32, s);
  for (int g = 0; g < groups; ++g)
    u = mx::add(u, mx::reshape(mx::slice(t, {g, 0, 0}, {g + 1, M, N}, s), {M, N}, s), s);
  mx::array y = mx::multiply(u, sa, s);
  if (bias.defined()) y = mx::add(y, mx::astype(array_of(bias), mx::float32, s), s);
  mx::array nan = mx::view(mx::array(static_cast<uint32_t>(0x7fc00000u), mx::uint32), mx::float32, s);
  y = mx::where(finite, y, nan, s);
  return wrap(mx::reshape(y, to_mx_shape(out_shape), s));
}

}  // namespace lucid::gpu
