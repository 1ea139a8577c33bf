#include "gpu/conv.h"

#include "gpu/array.h"

namespace lucid::gpu {

namespace {

// The convolution without bias, NCHW in and out.
mx::array conv_nchw(const mx::array& x, const mx::array& w, const Window2d& win, int64_t groups) {
  auto s = stream();
  const int h = x.shape(2), wd = x.shape(3);
  mx::array xh = mx::transpose(x, {0, 2, 3, 1}, s);
  mx::array wh = mx::transpose(w, {0, 2, 3, 1}, s);
  mx::array y = mx::conv_general(xh, wh, {int(win.sh), int(win.sw)}, {int(win.ph), int(win.pw)},
                                 {int(win.pad_bottom(h)), int(win.pad_right(wd))}, {int(win.dh), int(win.dw)},
                                 {1, 1}, int(groups), false, s);
  // Explicit bottom/right padding never yields more rows than `oh`, but be exact.
  if (y.shape(1) != win.oh || y.shape(2) != win.ow)
    y = mx::slice(y, {0, 0, 0, 0}, {y.shape(0), int(win.oh), int(win.ow), y.shape(3)}, s);
  return mx::transpose(y, {0, 3, 1, 2}, s);
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const Window2d& win, int64_t groups) {
  auto s = stream();
  mx::array y = conv_nchw(array_of(x), array_of(w), win, groups);
  if (b.defined()) y = mx::add(y, mx::reshape(array_of(b), {1, -1, 1, 1}, s), s);
  return wrap(y);
}

std::tuple<Tensor, Tensor, Tensor> conv2d_backward(const Tensor& g, const Tensor& x, const Tensor& w,
                                                   const Window2d& win, int64_t groups, bool want_x,
                                                   bool want_w, bool want_b) {
  auto s = stream();
  const mx::array& ga = array_of(g);
  Tensor gx, gw, gb;
  if (want_x || want_w) {
    // MLX differentiates its own convolution; the cotangent is dL/dy.
    auto fn = [&](const std::vector<mx::array>& in) { return std::vector<mx::array>{conv_nchw(in[0], in[1], win, groups)}; };
    auto [outs, grads] = mx::vjp(fn, {array_of(x), array_of(w)}, {ga});
    if (want_x) gx = wrap(grads[0]);
    if (want_w) gw = wrap(grads[1]);
  }
  if (want_b) gb = wrap(mx::sum(ga, std::vector<int>{0, 2, 3}, false, s));
  return {gx, gw, gb};
}

}  // namespace lucid::gpu
