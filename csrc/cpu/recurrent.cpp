#include "cpu/recurrent.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/blas.h"
#include "cpu/elementwise_loops.h"  // LUCID_AVX2_CLONES
#include "cpu/elementwise_math.h"

// One thread on purpose: a step's sgemm is small (N x 4H x H) and each step
// depends on the last, so the pool's hand-off would cost more than it saves.
// BLAS itself follows lucid's thread count.

namespace lucid::cpu {

namespace {

// One LSTM step's gates, fused: from gx_t + h W_hh^T (rows of 4H: i, f, g, o)
// and c_prev, writes the activations, c = f c_prev + i g and h = o tanh(c).
// Operations in the order of the per-op formulas (docs/numerics.md).
LUCID_AVX2_CLONES void lstm_step(const float* __restrict gx, const float* __restrict hw,
                                 const float* __restrict c_prev, float* __restrict act, float* __restrict c,
                                 float* __restrict h, int64_t n, int64_t k) {
  for (int64_t r = 0; r < n; ++r) {
    const float* gxr = gx + r * 4 * k;
    const float* hwr = hw + r * 4 * k;
    float* ar = act + r * 4 * k;
    const float* cpr = c_prev + r * k;
    float* cr = c + r * k;
    float* hr = h + r * k;
    for (int64_t j = 0; j < k; ++j) {
      float i = fast::sigmoid_f32(gxr[j] + hwr[j]);
      float f = fast::sigmoid_f32(gxr[k + j] + hwr[k + j]);
      float g = fast::tanh_f32(gxr[2 * k + j] + hwr[2 * k + j]);
      float o = fast::sigmoid_f32(gxr[3 * k + j] + hwr[3 * k + j]);
      float fc = f * cpr[j];
      float ig = i * g;
      float cn = fc + ig;
      ar[j] = i, ar[k + j] = f, ar[2 * k + j] = g, ar[3 * k + j] = o;
      cr[j] = cn;
      hr[j] = o * fast::tanh_f32(cn);
    }
  }
}

// One LSTM step backwards, fused: dh (d_out of this step already added) and
// dc carried from the later step -> the gate gradients d (rows of 4H); dc
// becomes the gradient reaching c_prev (dc f). dh is left for the caller's sgemm.
LUCID_AVX2_CLONES void lstm_step_back(const float* __restrict act,
                                      const float* __restrict c, const float* __restrict c_prev,
                                      float* __restrict dh, float* __restrict dc, float* __restrict d, int64_t n,
                                      int64_t k) {
  for (int64_t r = 0; r < n; ++r) {
    const float* ar = act + r * 4 * k;
    float* drow = d + r * 4 * k;
    const int64_t b = r * k;
    for (int64_t j = 0; j < k; ++j) {
      float i = ar[j], f = ar[k + j], g = ar[2 * k + j], o = ar[3 * k + j];
      float dht = dh[b + j];
      float tc = fast::tanh_f32(c[b + j]);
      float dct = dc[b + j] + (dht * o) * (1.0f - tc * tc);
      drow[j] = ((dct * g) * i) * (1.0f - i);
      drow[k + j] = ((dct * c_prev[b + j]) * f) * (1.0f - f);
      drow[2 * k + j] = (dct * i) * (1.0f - g * g);
      drow[3 * k + j] = ((dht * tc) * o) * (1.0f - o);
      dc[b + j] = dct * f;
    }
  }
}

// One GRU step's gates, fused: from gx_t (rows of 3H: r, z, n) and
// gh = h W_hh^T + b_hh, writes r, z, n, hn = gh's n part and
// h = n + z (h_prev - n), in the order of the per-op formulas.
LUCID_AVX2_CLONES void gru_step(const float* __restrict gx, const float* __restrict gh,
                                const float* __restrict h_prev, float* __restrict act, float* __restrict hn,
                                float* __restrict h, int64_t n, int64_t k) {
  for (int64_t r = 0; r < n; ++r) {
    const float* gxr = gx + r * 3 * k;
    const float* ghr = gh + r * 3 * k;
    float* ar = act + r * 3 * k;
    const int64_t b = r * k;
    for (int64_t j = 0; j < k; ++j) {
      float rg = fast::sigmoid_f32(gxr[j] + ghr[j]);
      float z = fast::sigmoid_f32(gxr[k + j] + ghr[k + j]);
      float hv = ghr[2 * k + j];
      float nv = fast::tanh_f32(gxr[2 * k + j] + rg * hv);
      ar[j] = rg, ar[k + j] = z, ar[2 * k + j] = nv;
      hn[b + j] = hv;
      h[b + j] = nv + z * (h_prev[b + j] - nv);
    }
  }
}

// One GRU step backwards, fused: dh (d_out of this step already added) ->
// the gradients of gx_t (d_gx) and of gh (d_gh, whose n part carries the
// extra factor r); dh becomes dh z, the direct path to h_prev (the caller's
// sgemm adds d_gh W_hh).
LUCID_AVX2_CLONES void gru_step_back(const float* __restrict act, const float* __restrict hn,
                                     const float* __restrict h_prev, float* __restrict dh, float* __restrict d_gx,
                                     float* __restrict d_gh, int64_t n, int64_t k) {
  for (int64_t r = 0; r < n; ++r) {
    const float* ar = act + r * 3 * k;
    float* dxr = d_gx + r * 3 * k;
    float* dhr = d_gh + r * 3 * k;
    const int64_t b = r * k;
    for (int64_t j = 0; j < k; ++j) {
      float rg = ar[j], z = ar[k + j], nv = ar[2 * k + j];
      float dht = dh[b + j];
      float dn = (dht * (1.0f - z)) * (1.0f - nv * nv);
      float dr = ((dn * hn[b + j]) * rg) * (1.0f - rg);
      float dz = ((dht * (h_prev[b + j] - nv)) * z) * (1.0f - z);
      dxr[j] = dr, dxr[k + j] = dz, dxr[2 * k + j] = dn;
      dhr[j] = dr, dhr[k + j] = dz, dhr[2 * k + j] = dn * rg;
      dh[b + j] = dht * z;
    }
  }
}

// y += x (the output gradient of a step joins the one carried back).
LUCID_AVX2_CLONES void add_into(float* __restrict y, const float* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] + x[i];
}

}  // namespace

void lstm_layer_forward(const Tensor& gx, const Tensor& w_hh, const Tensor& h0, const Tensor& c0, bool reverse,
                        const Tensor& out, const Tensor& h_n, const Tensor& c_n, const Tensor& acts,
                        const Tensor& cells) {
  const int64_t L = gx.size(0), n = gx.size(1), k = h0.size(1), nk = n * k, nk4 = 4 * nk;
  const float* gxp = gx.data<float>();
  const float* w = w_hh.data<float>();
  float* outp = out.data<float>();
  float* actp = acts.data<float>();
  float* cellp = cells.data<float>();
  std::vector<float> hw(static_cast<size_t>(nk4));
  const float* h = h0.data<float>();
  const float* c = c0.data<float>();
  for (int64_t step = 0; step < L; ++step) {
    const int64_t s = reverse ? L - 1 - step : step;
    blas::sgemm(false, true, n, 4 * k, k, 1.0f, h, k, w, k, 0.0f, hw.data(), 4 * k);  // h W_hh^T
    lstm_step(gxp + s * nk4, hw.data(), c, actp + s * nk4, cellp + s * nk, outp + s * nk, n, k);
    h = outp + s * nk;
    c = cellp + s * nk;
  }
  std::memcpy(h_n.data<float>(), h, sizeof(float) * nk);
  std::memcpy(c_n.data<float>(), c, sizeof(float) * nk);
}

void lstm_layer_backward(const Tensor& d_out, const Tensor& d_h_n, const Tensor& d_c_n, const Tensor& w_hh,
                         const Tensor& h0, const Tensor& c0, const Tensor& out, const Tensor& acts,
                         const Tensor& cells, bool reverse, const Tensor& d_gx, const Tensor& d_w,
                         const Tensor& d_h0, const Tensor& d_c0) {
  const int64_t L = out.size(0), n = out.size(1), k = out.size(2), nk = n * k, nk4 = 4 * nk;
  const float* dop = d_out.defined() ? d_out.data<float>() : nullptr;
  const float* w = w_hh.data<float>();
  const float* outp = out.data<float>();
  const float* actp = acts.data<float>();
  const float* cellp = cells.data<float>();
  float* dg = d_gx.data<float>();
  // d_h0 / d_c0 carry dh and dc through the steps and end as the state gradients.
  float* dh = d_h0.data<float>();
  float* dc = d_c0.data<float>();
  if (d_h_n.defined()) std::memcpy(dh, d_h_n.data<float>(), sizeof(float) * nk);
  else std::fill(dh, dh + nk, 0.0f);
  if (d_c_n.defined()) std::memcpy(dc, d_c_n.data<float>(), sizeof(float) * nk);
  else std::fill(dc, dc + nk, 0.0f);
  for (int64_t step = L - 1; step >= 0; --step) {
    const int64_t s = reverse ? L - 1 - step : step;
    const int64_t prev = reverse ? s + 1 : s - 1;  // the step that ran before s
    const float* c_prev = step == 0 ? c0.data<float>() : cellp + prev * nk;
    if (dop) add_into(dh, dop + s * nk, nk);
    lstm_step_back(actp + s * nk4, cellp + s * nk, c_prev, dh, dc, dg + s * nk4, n, k);
    blas::sgemm(false, false, n, k, 4 * k, 1.0f, dg + s * nk4, 4 * k, w, k, 0.0f, dh, k);  // d W_hh
  }
  // dW_hh = sum over steps of d_t^T h_prev(t): the first step read h0, every
  // other step the output of its neighbour, so two sgemms cover all steps.
  const int64_t first = reverse ? L - 1 : 0;
  const float* d_rest = reverse ? dg : dg + nk4;
  const float* h_rest = reverse ? outp + nk : outp;
  float* dw = d_w.data<float>();
  blas::sgemm(true, false, 4 * k, k, n, 1.0f, dg + first * nk4, 4 * k, h0.data<float>(), k, 0.0f, dw, k);
  blas::sgemm(true, false, 4 * k, k, (L - 1) * n, 1.0f, d_rest, 4 * k, h_rest, k, 1.0f, dw, k);
}

void gru_layer_forward(const Tensor& gx, const Tensor& w_hh, const Tensor& b_hh, const Tensor& h0, bool reverse,
                       const Tensor& out, const Tensor& h_n, const Tensor& acts, const Tensor& hn) {
  const int64_t L = gx.size(0), n = gx.size(1), k = h0.size(1), nk = n * k, nk3 = 3 * nk;
  const float* gxp = gx.data<float>();
  const float* w = w_hh.data<float>();
  const float* bias = b_hh.defined() ? b_hh.data<float>() : nullptr;
  float* outp = out.data<float>();
  float* actp = acts.data<float>();
  float* hnp = hn.data<float>();
  std::vector<float> gh(static_cast<size_t>(nk3));
  const float* h = h0.data<float>();
  for (int64_t step = 0; step < L; ++step) {
    const int64_t s = reverse ? L - 1 - step : step;
    blas::sgemm(false, true, n, 3 * k, k, 1.0f, h, k, w, k, 0.0f, gh.data(), 3 * k);  // h W_hh^T
    if (bias)
      for (int64_t r = 0; r < n; ++r) add_into(gh.data() + r * 3 * k, bias, 3 * k);
    gru_step(gxp + s * nk3, gh.data(), h, actp + s * nk3, hnp + s * nk, outp + s * nk, n, k);
    h = outp + s * nk;
  }
  std::memcpy(h_n.data<float>(), h, sizeof(float) * nk);
}

void gru_layer_backward(const Tensor& d_out, const Tensor& d_h_n, const Tensor& w_hh, const Tensor& h0,
                        const Tensor& out, const Tensor& acts, const Tensor& hn, bool reverse, const Tensor& d_gx,
                        const Tensor& d_w, const Tensor& d_b, const Tensor& d_h0) {
  const int64_t L = out.size(0), n = out.size(1), k = out.size(2), nk = n * k, nk3 = 3 * nk;
  const float* dop = d_out.defined() ? d_out.data<float>() : nullptr;
  const float* w = w_hh.data<float>();
  const float* outp = out.data<float>();
  const float* actp = acts.data<float>();
  const float* hnp = hn.data<float>();
  float* dgx = d_gx.data<float>();
  std::vector<float> dgh(static_cast<size_t>(L * nk3));
  float* dh = d_h0.data<float>();  // carries dh through the steps, ends as d_h0
  if (d_h_n.defined()) std::memcpy(dh, d_h_n.data<float>(), sizeof(float) * nk);
  else std::fill(dh, dh + nk, 0.0f);
  for (int64_t step = L - 1; step >= 0; --step) {
    const int64_t s = reverse ? L - 1 - step : step;
    const int64_t prev = reverse ? s + 1 : s - 1;
    const float* h_prev = step == 0 ? h0.data<float>() : outp + prev * nk;
    if (dop) add_into(dh, dop + s * nk, nk);
    gru_step_back(actp + s * nk3, hnp + s * nk, h_prev, dh, dgx + s * nk3, dgh.data() + s * nk3, n, k);
    blas::sgemm(false, false, n, k, 3 * k, 1.0f, dgh.data() + s * nk3, 3 * k, w, k, 1.0f, dh, k);  // + d_gh W_hh
  }
  // dW_hh = sum over steps of d_gh_t^T h_prev(t), as for the LSTM: two sgemms.
  const int64_t first = reverse ? L - 1 : 0;
  const float* d_rest = reverse ? dgh.data() : dgh.data() + nk3;
  const float* h_rest = reverse ? outp + nk : outp;
  float* dw = d_w.data<float>();
  blas::sgemm(true, false, 3 * k, k, n, 1.0f, dgh.data() + first * nk3, 3 * k, h0.data<float>(), k, 0.0f, dw, k);
  blas::sgemm(true, false, 3 * k, k, (L - 1) * n, 1.0f, d_rest, 3 * k, h_rest, k, 1.0f, dw, k);
  if (d_b.defined()) {  // d_b_hh = the column sums of d_gh over every step and row
    float* db = d_b.data<float>();
    std::fill(db, db + 3 * k, 0.0f);
    for (int64_t row = 0; row < L * n; ++row) add_into(db, dgh.data() + row * 3 * k, 3 * k);
  }
}

}  // namespace lucid::cpu
