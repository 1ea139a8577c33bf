#include "gpu/pool.h"

#include <limits>

#include "gpu/array.h"

namespace lucid::gpu {

namespace {

// x padded on every side the window can reach, with `fill` in the padding.
mx::array pad_for(const mx::array& x, const Window2d& win, float fill) {
  auto s = stream();
  const int h = x.shape(2), w = x.shape(3);
  std::vector<std::pair<int, int>> widths{
      {0, 0}, {0, 0}, {int(win.ph), int(win.pad_bottom(h))}, {int(win.pw), int(win.pad_right(w))}};
  return mx::pad(x, widths, mx::array(fill, x.dtype()), "constant", s);
}

// The values under window tap (i, j) for every output pixel: [N, C, oh, ow].
mx::array tap(const mx::array& padded, const Window2d& win, int64_t i, int64_t j) {
  const int r0 = int(i * win.dh), c0 = int(j * win.dw);
  return mx::slice(padded, {0, 0, r0, c0},
                   {padded.shape(0), padded.shape(1), int(r0 + (win.oh - 1) * win.sh + 1),
                    int(c0 + (win.ow - 1) * win.sw + 1)},
                   {1, 1, int(win.sh), int(win.sw)}, stream());
}

mx::array window_sum(const mx::array& x, const Window2d& win) {
  auto s = stream();
  mx::array padded = pad_for(x, win, 0.0f);
  mx::array acc = tap(padded, win, 0, 0);
  for (int64_t i = 0; i < win.kh; ++i)
    for (int64_t j = 0; j < win.kw; ++j)
      if (i || j) acc = mx::add(acc, tap(padded, win, i, j), s);
  return acc;
}

mx::array divisor_array(const std::vector<float>& divisor, const Window2d& win, mx::Dtype dt) {
  mx::array d(divisor.begin(), mx::Shape{int(win.oh), int(win.ow)}, mx::float32);
  return mx::astype(d, dt, stream());
}

// Row i of the matrix averages input positions [start, end) of bin i.
mx::array bin_matrix(int64_t out, int64_t in, mx::Dtype dt) {
  std::vector<float> m(static_cast<size_t>(out * in), 0.0f);
  for (int64_t i = 0; i < out; ++i) {
    const int64_t a = adaptive_start(i, in, out), b = adaptive_end(i, in, out);
    for (int64_t k = a; k < b; ++k) m[i * in + k] = 1.0f / static_cast<float>(b - a);
  }
  return mx::astype(mx::array(m.begin(), mx::Shape{int(out), int(in)}, mx::float32), dt, stream());
}

}  // namespace

std::pair<Tensor, Tensor> max_pool2d(const Tensor& x, const Window2d& win) {
  auto s = stream();
  const mx::array& xa = array_of(x);
  const int h = xa.shape(2), w = xa.shape(3);
  mx::array padded = pad_for(xa, win, -std::numeric_limits<float>::infinity());
  std::vector<mx::array> taps;
  for (int64_t i = 0; i < win.kh; ++i)
    for (int64_t j = 0; j < win.kw; ++j) taps.push_back(tap(padded, win, i, j));
  mx::array stacked = mx::stack(taps, -1, s);                            // [N, C, oh, ow, kh*kw]
  mx::array values = mx::max(stacked, -1, false, s);
  mx::array k = mx::astype(mx::argmax(stacked, -1, false, s), mx::int32, s);  // first maximum wins
  // Tap k sits at input row r*sh - ph + (k / kw)*dh, column q*sw - pw + (k % kw)*dw.
  mx::array kw_ = mx::array(int(win.kw));
  mx::array rows = mx::reshape(mx::subtract(mx::multiply(mx::arange(int(win.oh), mx::int32, s), mx::array(int(win.sh)), s),
                                            mx::array(int(win.ph)), s), {int(win.oh), 1}, s);
  mx::array cols = mx::subtract(mx::multiply(mx::arange(int(win.ow), mx::int32, s), mx::array(int(win.sw)), s),
                                mx::array(int(win.pw)), s);
  mx::array ih = mx::add(rows, mx::multiply(mx::floor_divide(k, kw_, s), mx::array(int(win.dh)), s), s);
  mx::array iw = mx::add(cols, mx::multiply(mx::remainder(k, kw_, s), mx::array(int(win.dw)), s), s);
  // A window of nothing but -inf can pick a padding tap; clip so the index stays inside the plane.
  ih = mx::clip(ih, mx::array(0), mx::array(h - 1), s);
  iw = mx::clip(iw, mx::array(0), mx::array(w - 1), s);
  mx::array idx = mx::astype(mx::add(mx::multiply(ih, mx::array(w), s), iw, s), mx::int64, s);
  return {wrap(values), wrap(idx)};
}

Tensor qmax_pool2d(const Tensor& x, const Window2d& win) {
  auto s = stream();
  const mx::array& xa = array_of(x);
  // The padding holds the dtype's lowest code; every window reaches the input
  // (ops checks padding <= half the kernel), so padding never exceeds a real code.
  const float lowest = xa.dtype() == mx::int8 ? -128.0f : 0.0f;
  mx::array padded = pad_for(xa, win, lowest);
  mx::array acc = tap(padded, win, 0, 0);
  for (int64_t i = 0; i < win.kh; ++i)
    for (int64_t j = 0; j < win.kw; ++j)
      if (i || j) acc = mx::maximum(acc, tap(padded, win, i, j), s);
  return wrap(acc);
}

Tensor max_pool2d_backward(const Tensor& g, const Tensor& idx, const Shape& x_shape) {
  auto s = stream();
  const mx::array& ga = array_of(g);
  const int planes = int(x_shape[0] * x_shape[1]), hw = int(x_shape[2] * x_shape[3]);
  const int l = ga.shape(2) * ga.shape(3);
  mx::array offsets = mx::reshape(mx::multiply(mx::arange(planes, mx::int64, s), mx::array(int64_t(hw)), s), {planes, 1}, s);
  mx::array flat = mx::reshape(mx::add(mx::reshape(array_of(idx), {planes, l}, s), offsets, s), {-1}, s);
  mx::array zeros = mx::zeros({planes * hw}, ga.dtype(), s);
  mx::array gx = mx::scatter_add(zeros, flat, mx::reshape(ga, {planes * l, 1}, s), 0, s);
  return wrap(mx::reshape(gx, to_mx_shape(x_shape), s));
}

Tensor avg_pool2d(const Tensor& x, const Window2d& win, const std::vector<float>& divisor) {
  const mx::array& xa = array_of(x);
  return wrap(mx::divide(window_sum(xa, win), divisor_array(divisor, win, xa.dtype()), stream()));
}

Tensor avg_pool2d_backward(const Tensor& g, const Tensor& x, const Window2d& win, const std::vector<float>& divisor) {
  const mx::array& xa = array_of(x);
  mx::array d = divisor_array(divisor, win, xa.dtype());
  // The window sum is linear, so its vjp at any point is the backward; MLX derives it.
  auto fn = [&](const mx::array& in) { return window_sum(in, win); };
  auto [out, gx] = mx::vjp(fn, xa, mx::divide(array_of(g), d, stream()));
  return wrap(gx);
}

Tensor adaptive_avg_pool2d(const Tensor& x, int64_t oh, int64_t ow) {
  auto s = stream();
  const mx::array& xa = array_of(x);
  mx::array a = bin_matrix(oh, xa.shape(2), xa.dtype());
  mx::array b = bin_matrix(ow, xa.shape(3), xa.dtype());
  return wrap(matmul_checked(matmul_checked(a, xa, s), mx::transpose(b, s), s));
}

Tensor adaptive_avg_pool2d_backward(const Tensor& g, const Tensor& x) {
  auto s = stream();
  const mx::array& ga = array_of(g);
  const mx::array& xa = array_of(x);
  mx::array a = bin_matrix(ga.shape(2), xa.shape(2), ga.dtype());
  mx::array b = bin_matrix(ga.shape(3), xa.shape(3), ga.dtype());
  return wrap(matmul_checked(matmul_checked(mx::transpose(a, s), ga, s), b, s));
}

}  // namespace lucid::gpu
