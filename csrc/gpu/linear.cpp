#include "gpu/linear.h"

#include "gpu/array.h"

namespace lucid::gpu {

namespace {
// [..., n] -> [rows, n]
mx::array as_matrix(const mx::array& a) { return mx::reshape(a, {-1, a.shape(-1)}, stream()); }
}  // namespace

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  auto s = stream();
  const mx::array& xa = array_of(x);
  mx::array wt = mx::transpose(array_of(w), s);
  mx::Shape out_shape = xa.shape();
  out_shape.back() = wt.shape(1);
  mx::array x2 = as_matrix(xa);
  mx::array y = b.defined() && x2.size() != 0 && wt.size() != 0 ? mx::addmm(array_of(b), x2, wt, 1.0f, 1.0f, s)
                : b.defined() ? mx::add(matmul_checked(x2, wt, s), array_of(b), s)
                              : matmul_checked(x2, wt, s);
  return wrap(mx::reshape(y, out_shape, s));
}

std::tuple<Tensor, Tensor, Tensor> linear_backward(const Tensor& g, const Tensor& x, const Tensor& w, bool want_x,
                                                   bool want_w, bool want_b) {
  auto s = stream();
  mx::array g2 = as_matrix(array_of(g));
  Tensor gx, gw, gb;
  if (want_x) gx = wrap(mx::reshape(matmul_checked(g2, array_of(w), s), array_of(x).shape(), s));
  if (want_w) gw = wrap(matmul_checked(mx::transpose(g2, s), as_matrix(array_of(x)), s));
  if (want_b) gb = wrap(mx::sum(g2, 0, false, s));
  return {gx, gw, gb};
}

}  // namespace lucid::gpu
