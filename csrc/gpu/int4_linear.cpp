// int4_weight_only_linear on the GPU stream. MLX's quantized_matmul is not
// used: it dequantizes as q * s + b with b = -z * s rounded separately (and
// may contract the multiply-add), so its weights differ from the contract's
// fl(float(q - z) * s) in the last bit. Dequantizing with explicit ops keeps
// the weights equal to the CPU stream's; only the matmul's summation order
// differs (docs/numerics.md, "What is not bit-identical").
#include "gpu/int4_linear.h"

#include "gpu/array.h"

namespace lucid::gpu {

Tensor int4_weight_only_linear(const Tensor& x, const Tensor& w_packed, const Tensor& scale, const Tensor& zp,
                               int64_t group_size, bool is_signed, const Tensor& bias, const Shape& out_shape) {
  auto s = stream();
  const mx::array& wp = array_of(w_packed);
  const int N = wp.shape(0), K = 2 * wp.shape(1), G = static_cast<int>(group_size);
  mx::array b = mx::astype(wp, mx::int32, s);
  mx::array lo = mx::bitwise_and(b, mx::array(15, mx::int32), s);
  mx::array hi = mx::right_shift(b, mx::array(4, mx::int32), s);
  mx::array q = mx::reshape(mx::stack({lo, hi}, -1, s), {N, K / G, G}, s);  // byte j -> k = 2j, 2j + 1
  if (is_signed) q = mx::subtract(mx::bitwise_xor(q, mx::array(8, mx::int32), s), mx::array(8, mx::int32), s);
  mx::array d = mx::subtract(q, mx::expand_dims(array_of(zp), -1, s), s);
  mx::array w = mx::multiply(mx::astype(d, mx::float32, s), mx::expand_dims(array_of(scale), -1, s), s);
  w = mx::reshape(w, {N, K}, s);
  const mx::array& xa = array_of(x);
  int M = 1;
  for (int d = 0; d + 1 < xa.ndim(); ++d) M *= xa.shape(d);
  mx::array y = matmul_checked(mx::reshape(xa, {M, K}, s), mx::transpose(w, s), s);
  if (bias.defined()) y = mx::add(y, mx::astype(array_of(bias), mx::float32, s), s);
  return wrap(mx::reshape(y, to_mx_shape(out_shape), s));
}

}  // namespace lucid::gpu
