// The group-wise affine format on the GPU stream. The codes are not taken from
// mlx::core::quantize: its Metal kernel rounds half away from zero and starts
// its group maximum at 0, so on Apple GPUs its codes differ from its own CPU
// backend's on ties and on all-negative groups. Composing the CPU stream's
// float steps from MLX ops (each op one IEEE operation, nothing contracted)
// gives the same bits on every backend. The matmul is MLX's quantized_matmul:
// it reads exactly these words, scales and biases.
#include "gpu/group_quant.h"

#include "gpu/array.h"

namespace lucid::gpu {

namespace {

// Codes as int32 (N, K / G, G) from the packed words.
mx::array unpack(const mx::array& words, int K, int group_size, int bits, mx::StreamOrDevice s) {
  const int N = words.shape(0), per_word = 32 / bits;
  mx::array u = mx::view(words, mx::uint32, s);  // (N, K / per_word)
  mx::array shifts = mx::multiply(mx::arange(per_word, mx::uint32, s), mx::array(static_cast<uint32_t>(bits)), s);
  mx::array q = mx::right_shift(mx::expand_dims(u, -1, s), shifts, s);
  q = mx::bitwise_and(q, mx::array(static_cast<uint32_t>((1u << bits) - 1u)), s);
  return mx::reshape(mx::astype(q, mx::int32, s), {N, K / group_size, group_size}, s);
}

}  // namespace

std::vector<Tensor> group_quantize(const Tensor& w, int group_size, int bits) {
  auto s = stream();
  const mx::array& wa = array_of(w);
  const int N = wa.shape(0), K = wa.shape(1), groups = K / group_size, per_word = 32 / bits;
  const mx::array zero(0.0f), n_bins(static_cast<float>((1 << bits) - 1));
  mx::array g = mx::reshape(wa, {N, groups, group_size}, s);
  mx::array w_max = mx::max(g, -1, true, s), w_min = mx::min(g, -1, true, s);
  mx::array min_side = mx::greater(mx::abs(w_min, s), mx::abs(w_max, s), s);
  mx::array scale = mx::maximum(mx::divide(mx::subtract(w_max, w_min, s), n_bins, s), mx::array(1e-7f), s);
  scale = mx::where(min_side, scale, mx::negative(scale, s), s);
  mx::array edge = mx::where(min_side, w_min, w_max, s);
  mx::array q0 = mx::round(mx::divide(edge, scale, s), 0, s);  // half to even, as the CPU's nearbyint
  mx::array nonzero = mx::not_equal(q0, zero, s);
  scale = mx::where(nonzero, mx::divide(edge, mx::where(nonzero, q0, mx::array(1.0f), s), s), scale, s);
  mx::array bias = mx::where(nonzero, edge, zero, s);
  mx::array q = mx::round(mx::divide(mx::subtract(g, bias, s), scale, s), 0, s);
  q = mx::astype(mx::minimum(mx::maximum(q, zero, s), n_bins, s), mx::uint32, s);
  // Element k of a word at bit k * bits: the fields are disjoint, so a sum is an OR.
  q = mx::reshape(q, {N, K / per_word, per_word}, s);
  mx::array shifts = mx::multiply(mx::arange(per_word, mx::uint32, s), mx::array(static_cast<uint32_t>(bits)), s);
  mx::array words = mx::sum(mx::left_shift(q, shifts, s), -1, false, s);
  return {wrap(mx::view(words, mx::int32, s)), wrap(mx::reshape(scale, {N, groups}, s)),
          wrap(mx::reshape(bias, {N, groups}, s))};
}

Tensor group_dequantize(const Tensor& words, const Tensor& scales, const Tensor& biases, int group_size, int bits) {
  auto s = stream();
  const mx::array& wa = array_of(words);
  const int N = wa.shape(0), K = wa.shape(1) * (32 / bits);
  mx::array q = mx::astype(unpack(wa, K, group_size, bits, s), mx::float32, s);
  mx::array w = mx::multiply(q, mx::expand_dims(array_of(scales), -1, s), s);
  w = mx::add(w, mx::expand_dims(array_of(biases), -1, s), s);
  return wrap(mx::reshape(w, {N, K}, s));
}

Tensor group_quantized_linear(const Tensor& x, const Tensor& words, const Tensor& scales, const Tensor& biases,
                              int group_size, int bits, const Tensor& bias, const Shape& out_shape) {
  auto s = stream();
  const mx::array& xa = array_of(x);
  const int K = xa.shape(xa.ndim() - 1);
  int M = 1;
  for (int d = 0; d + 1 < xa.ndim(); ++d) M *= xa.shape(d);
  const int N = array_of(words).shape(0);
  mx::array y = M == 0 || N == 0 ? mx::zeros({M, N}, mx::float32, s)
                                 : mx::quantized_matmul(mx::reshape(xa, {M, K}, s),
                                                        mx::view(array_of(words), mx::uint32, s), array_of(scales),
                                                        array_of(biases), true, group_size, bits, "affine", s);
  if (bias.defined()) y = mx::add(y, array_of(bias), s);
  return wrap(mx::reshape(y, to_mx_shape(out_shape), s));
}

}  // namespace lucid::gpu
