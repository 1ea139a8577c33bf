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

// Codes as int32 (N, K / G, G) from the packed words: each word's 32 bits
// laid out as the row's bit stream, then regrouped `bits` at a time (the
// layout of every width, 3-, 5- and 6-bit codes straddling words included).
mx::array unpack(const mx::array& words, int K, int group_size, int bits, mx::StreamOrDevice s) {
  const int N = words.shape(0);
  mx::array u = mx::view(words, mx::uint32, s);  // (N, K * bits / 32)
  mx::array stream_bits = mx::bitwise_and(mx::right_shift(mx::expand_dims(u, -1, s), mx::arange(32, mx::uint32, s), s),
                                          mx::array(1u, mx::uint32), s);
  stream_bits = mx::reshape(stream_bits, {N, K, bits}, s);
  mx::array q = mx::sum(mx::left_shift(stream_bits, mx::arange(bits, mx::uint32, s), s), -1, false, s);
  return mx::reshape(mx::astype(q, mx::int32, s), {N, K / group_size, group_size}, s);
}

// uint32 codes (N, K) -> words (N, K * bits / 32): the inverse of unpack.
mx::array pack_codes(const mx::array& q, int bits, mx::StreamOrDevice s) {
  const int N = q.shape(0), K = q.shape(1);
  mx::array b = mx::bitwise_and(mx::right_shift(mx::expand_dims(q, -1, s), mx::arange(bits, mx::uint32, s), s),
                                mx::array(1u, mx::uint32), s);
  b = mx::reshape(b, {N, K * bits / 32, 32}, s);
  // The bits are disjoint, so a sum is an OR.
  return mx::sum(mx::left_shift(b, mx::arange(32, mx::uint32, s), s), -1, false, s);
}

}  // namespace

std::vector<Tensor> group_quantize(const Tensor& w, int group_size, int bits) {
  auto s = stream();
  const mx::array& wa = array_of(w);
  const int N = wa.shape(0), K = wa.shape(1), groups = K / group_size;
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
  mx::array words = pack_codes(mx::reshape(q, {N, K}, s), bits, s);
  return {wrap(mx::view(words, mx::int32, s)), wrap(mx::reshape(scale, {N, groups}, s)),
          wrap(mx::reshape(bias, {N, groups}, s))};
}

Tensor group_dequantize(const Tensor& words, const Tensor& scales, const Tensor& biases, int group_size, int bits) {
  auto s = stream();
  const mx::array& wa = array_of(words);
  const int N = wa.shape(0), K = wa.shape(1) * 32 / bits;
  mx::array q = mx::astype(unpack(wa, K, group_size, bits, s), mx::float32, s);
  mx::array w = mx::multiply(q, mx::expand_dims(array_of(scales), -1, s), s);
  w = mx::add(w, mx::expand_dims(array_of(biases), -1, s), s);
  return wrap(mx::reshape(w, {N, K}, s));
}

// The block formats evaluate core/minifloat.h's group functions over the
// arrays' data: the E8M0 / E4M3 scale decisions and element roundings are
// the CPU stream's scalar code, so the bits cannot differ (MLX's own
// quantizers differ between its CPU and Metal backends on exactly these
// decisions). Weights are quantized once, offline; the host pass is the
// price of that guarantee.
std::vector<Tensor> block_quantize(const Tensor& w, minifloat::BlockMode mode) {
  auto s = stream();
  mx::array wa = mx::contiguous(mx::astype(array_of(w), mx::float32, s), false, s);
  mx::eval(wa);
  const int N = wa.shape(0), K = wa.shape(1), bits = minifloat::block_bits(mode), G = minifloat::block_group(mode);
  std::vector<uint32_t> words(static_cast<size_t>(N) * (K * bits / 32));
  std::vector<uint8_t> scales(static_cast<size_t>(N) * (K / G));
  minifloat::block_quantize_rows(wa.data<float>(), N, K, mode, words.data(), scales.data());
  mx::array wq(words.data(), mx::Shape{N, K * bits / 32}, mx::uint32);
  mx::array sc(scales.data(), mx::Shape{N, K / G}, mx::uint8);
  return {wrap(mx::view(wq, mx::int32, s)), wrap(sc)};
}

Tensor block_dequantize(const Tensor& words, const Tensor& scales, minifloat::BlockMode mode) {
  auto s = stream();
  mx::array wa = mx::contiguous(mx::view(array_of(words), mx::uint32, s), false, s);
  mx::array sa = mx::contiguous(array_of(scales), false, s);
  mx::eval({wa, sa});
  const int bits = minifloat::block_bits(mode);
  const int N = wa.shape(0), K = wa.shape(1) * 32 / bits;
  std::vector<float> out(static_cast<size_t>(N) * K);
  minifloat::block_dequantize_rows(wa.data<uint32_t>(), sa.data<uint8_t>(), N, K, mode, out.data());
  return wrap(mx::array(out.data(), mx::Shape{N, K}, mx::float32));
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
