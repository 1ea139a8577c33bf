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

// The hidden state each step read, in time order: h0 for the first step run,
// else the neighbour's output (L, N, H).
mx::array previous_states(const mx::array& out, const mx::array& h0, bool reverse, mx::StreamOrDevice s) {
  const int L = out.shape(0), n = out.shape(1), k = out.shape(2);
  mx::array first = mx::reshape(h0, {1, n, k}, s);
  if (L == 1) return first;
  return reverse ? mx::concatenate({mx::slice(out, {1, 0, 0}, {L, n, k}, s), first}, 0, s)
                 : mx::concatenate({first, mx::slice(out, {0, 0, 0}, {L - 1, n, k}, s)}, 0, s);
}

// sum over steps of d_t^T h_prev(t): the recurrent weight's gradient, one matmul.
mx::array weight_grad(const mx::array& d, const mx::array& h_prev, mx::StreamOrDevice s) {
  const int rows = d.shape(0) * d.shape(1);
  return matmul_checked(mx::transpose(mx::reshape(d, {rows, d.shape(2)}, s), s),
                        mx::reshape(h_prev, {rows, h_prev.shape(2)}, s), s);
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
  mx::array d_w = weight_grad(d_gx, previous_states(outa, array_of(h0), reverse, s), s);
  return {wrap(d_gx), wrap(d_w), wrap(dh), wrap(dc)};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> gru_layer_forward(const Tensor& gx, const Tensor& w_hh, const Tensor& b_hh,
                                                             const Tensor& h0, bool reverse) {
  auto s = stream();
  const mx::array& g = array_of(gx);
  const int L = g.shape(0), k = array_of(h0).shape(1);
  mx::array wt = mx::transpose(array_of(w_hh), s);
  mx::array h = array_of(h0);
  std::vector<mx::array> outs(L, h), acts(L, h), hns(L, h);
  for (int step = 0; step < L; ++step) {
    const int t = reverse ? L - 1 - step : step;
    mx::array gxt = step_of(g, t, s);
    mx::array gh = matmul_checked(h, wt, s);
    if (b_hh.defined()) gh = mx::add(gh, array_of(b_hh), s);
    mx::array r = mx::sigmoid(mx::add(gate(gxt, 0, k, s), gate(gh, 0, k, s), s), s);
    mx::array z = mx::sigmoid(mx::add(gate(gxt, 1, k, s), gate(gh, 1, k, s), s), s);
    mx::array hv = gate(gh, 2, k, s);
    mx::array nv = mx::tanh(mx::add(gate(gxt, 2, k, s), mx::multiply(r, hv, s), s), s);
    h = mx::add(nv, mx::multiply(z, mx::subtract(h, nv, s), s), s);
    acts[t] = mx::concatenate({r, z, nv}, 1, s);
    hns[t] = hv;
    outs[t] = h;
  }
  return {wrap(mx::stack(outs, 0, s)), wrap(h), wrap(mx::stack(acts, 0, s)), wrap(mx::stack(hns, 0, s))};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> gru_layer_backward(const Tensor& d_out, const Tensor& d_h_n,
                                                              const Tensor& w_hh, bool has_bias, const Tensor& h0,
                                                              const Tensor& out, const Tensor& acts, const Tensor& hn,
                                                              bool reverse) {
  auto s = stream();
  const mx::array& outa = array_of(out);
  const mx::array &acta = array_of(acts), &hna = array_of(hn), &w = array_of(w_hh);
  const int L = outa.shape(0), n = outa.shape(1), k = outa.shape(2);
  const mx::Dtype dt = outa.dtype();
  mx::array one(1.0f, dt);
  mx::array dh = d_h_n.defined() ? array_of(d_h_n) : mx::zeros({n, k}, dt, s);
  std::vector<mx::array> dgx(L, dh), dgh(L, dh);
  for (int step = L - 1; step >= 0; --step) {
    const int t = reverse ? L - 1 - step : step;
    const int prev = reverse ? t + 1 : t - 1;
    mx::array a = step_of(acta, t, s);
    mx::array r = gate(a, 0, k, s), z = gate(a, 1, k, s), nv = gate(a, 2, k, s);
    mx::array h_prev = step == 0 ? array_of(h0) : step_of(outa, prev, s);
    if (d_out.defined()) dh = mx::add(dh, step_of(array_of(d_out), t, s), s);
    mx::array dn = mx::multiply(mx::multiply(dh, mx::subtract(one, z, s), s),
                                mx::subtract(one, mx::multiply(nv, nv, s), s), s);
    mx::array dr =
        mx::multiply(mx::multiply(mx::multiply(dn, step_of(hna, t, s), s), r, s), mx::subtract(one, r, s), s);
    mx::array dz = mx::multiply(mx::multiply(mx::multiply(dh, mx::subtract(h_prev, nv, s), s), z, s),
                                mx::subtract(one, z, s), s);
    dgx[t] = mx::concatenate({dr, dz, dn}, 1, s);
    dgh[t] = mx::concatenate({dr, dz, mx::multiply(dn, r, s)}, 1, s);
    dh = mx::add(mx::multiply(dh, z, s), matmul_checked(dgh[t], w, s), s);
  }
  mx::array d_gh = mx::stack(dgh, 0, s);
  mx::array d_w = weight_grad(d_gh, previous_states(outa, array_of(h0), reverse, s), s);
  Tensor d_b;
  if (has_bias) d_b = wrap(mx::sum(mx::reshape(d_gh, {L * n, 3 * k}, s), 0, false, s));
  return {wrap(mx::stack(dgx, 0, s)), wrap(d_w), d_b, wrap(dh)};
}

}  // namespace lucid::gpu
