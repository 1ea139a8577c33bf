#include "gpu/qmatmul.h"

#include <algorithm>

#include "gpu/array.h"

namespace lucid::gpu {

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
  mx::array c = mx::clip(v, mx::array(lo, mx::float32), mx::array(hi, mx::float32), s);
  return wrap(mx::astype(c, to_mx(out), s));
}

}  // namespace lucid::gpu
