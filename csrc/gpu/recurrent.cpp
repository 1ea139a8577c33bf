#include "gpu/recurrent.h"

#include <vector>

#include "gpu/array.h"

namespace lucid::gpu {

namespace {

// a[t] of an (L, N, C) array, as (N, C).
mx::array step_of(const mx::array& a, int t, mx::StreamOrDevice s) {
  const int n = a.shape(1), c = a.shape(2);
  return mx::reshape(mx::slice(a, {t, 0, 0}, {t + 1, n, c}, s), {n, c}, s);
}

// Columns [q k, (q + 1) k) of an (N, G k) array: gate q.
mx::array gate(const mx::array& a, int q, int k, mx::StreamOrDevice s) {
  return mx::slice(a, {0, q * k}, {a.shape(0), (q + 1) * k}, s);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> lstm_layer_forward(const Tensor& gx, const Tensor& w_hh,
                                                                      const Tensor& h0, const Tensor& c0,
                                                                      bool reverse) {
  auto s = stream();
  const mx::array& g = array_of(gx);
  const int L = g.shape(0), k = array_of(h0).shape(1);
  mx::array wt = mx::transpose(array_of(w_hh), s);
  mx::array h = array_of(h0), c = array_of(c0);
  std::vector<mx::array> outs(L, h), acts(L, h), cells(L, c);
  for (int step = 0; step < L; ++step) {
    const int t = reverse ? L - 1 - step : step;
    mx::array gates = mx::add(step_of(g, t, s), matmul_checked(h, wt, s), s);
    mx::array sig = mx::sigmoid(gates, s);
    mx::array i = gate(sig, 0, k, s), f = gate(sig, 1, k, s), o = gate(sig, 3, k, s);
    mx::array gg = mx::tanh(gate(gates, 2, k, s), s);
    c = mx::add(mx::multiply(f, c, s), mx::multiply(i, gg, s), s);
    h = mx::multiply(o, mx::tanh(c, s), s);
    acts[t] = mx::concatenate({i, f, gg, o}, 1, s);
    cells[t] = c;
    outs[t] = h;
  }
  return {wrap(mx::stack(outs, 0, s)), wrap(h), wrap(c), wrap(mx::stack(acts, 0, s)), wrap(mx::stack(cells, 0, s))};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> lstm_layer_backward(const Tensor& d_out, const Tensor& d_h_n,
                                                               const Tensor& d_c_n, const Tensor& w_hh,
                                                               const Tensor& h0, const Tensor& c0, const Tensor& out,
                                                               const Tensor& acts, const Tensor& cells,
                                                               bool reverse) {
  auto s = stream();
  const mx::array& outa = array_of(out);
  const mx::array &acta = array_of(acts), &cella = array_of(cells), &w = array_of(w_hh);
  const int L = outa.shape(0), n = outa.shape(1), k = outa.shape(2);
  const mx::Dtype dt = outa.dtype();
  mx::array one(1.0f, dt);
  mx::array dh = d_h_n.defined() ? array_of(d_h_n) : mx::zeros({n, k}, dt, s);
  mx::array dc = d_c_n.defined() ? array_of(d_c_n) : mx::zeros({n, k}, dt, s);
  std::vector<mx::array> dgs(L, dh);
  for (int step = L - 1; step >= 0; --step) {
    const int t = reverse ? L - 1 - step : step;
    const int prev = reverse ? t + 1 : t - 1;
    mx::array a = step_of(acta, t, s);
    mx::array i = gate(a, 0, k, s), f = gate(a, 1, k, s), g = gate(a, 2, k, s), o = gate(a, 3, k, s);
    if (d_out.defined()) dh = mx::add(dh, step_of(array_of(d_out), t, s), s);
    mx::array tc = mx::tanh(step_of(cella, t, s), s);
    mx::array c_prev = step == 0 ? array_of(c0) : step_of(cella, prev, s);
    dc = mx::add(dc, mx::multiply(mx::multiply(dh, o, s), mx::subtract(one, mx::multiply(tc, tc, s), s), s), s);
    mx::array di = mx::multiply(mx::multiply(mx::multiply(dc, g, s), i, s), mx::subtract(one, i, s), s);
    mx::array df = mx::multiply(mx::multiply(mx::multiply(dc, c_prev, s), f, s), mx::subtract(one, f, s), s);
    mx::array dg = mx::multiply(mx::multiply(dc, i, s), mx::subtract(one, mx::multiply(g, g, s), s), s);
    mx::array d_o = mx::multiply(mx::multiply(mx::multiply(dh, tc, s), o, s), mx::subtract(one, o, s), s);
    dgs[t] = mx::concatenate({di, df, dg, d_o}, 1, s);
    dh = matmul_checked(dgs[t], w, s);
    dc = mx::multiply(dc, f, s);
  }
  mx::array d_gx = mx::stack(dgs, 0, s);
  // The hidden state each step read: h0 for the first step run, else the
  // neighbour's output; dW_hh is one matmul over all steps.
  mx::array first = mx::reshape(array_of(h0), {1, n, k}, s);
  mx::array h_prev = L == 1 ? first
                     : reverse ? mx::concatenate({mx::slice(outa, {1, 0, 0}, {L, n, k}, s), first}, 0, s)
                               : mx::concatenate({first, mx::slice(outa, {0, 0, 0}, {L - 1, n, k}, s)}, 0, s);
  mx::array d_w = matmul_checked(mx::transpose(mx::reshape(d_gx, {L * n, 4 * k}, s), s),
                                 mx::reshape(h_prev, {L * n, k}, s), s);
  return {wrap(d_gx), wrap(d_w), wrap(dh), wrap(dc)};
}

}  // namespace lucid::gpu
