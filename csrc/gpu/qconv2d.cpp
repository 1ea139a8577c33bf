#include "gpu/qconv2d.h"

#include <vector>

#include "gpu/qmatmul.h"
#include "gpu/array.h"

namespace lucid::gpu {

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
