#include "cpu/recurrent.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "cpu/blas.h"
#include "cpu/elementwise_loops.h"  // LUCID_AVX2_CLONES
#include "cpu/elementwise_math.h"

// One thread on purpose: a step's gemm is small (N x 4H x H) and each step
// depends on the last, so the pool's hand-off would cost more than it saves.
// BLAS itself follows lucid's thread count.

namespace lucid::cpu {

namespace {

// The CPU stream's sigmoid and tanh (cpu/elementwise_functors.h): the branch-free
// float32 forms, the C library's in float64.
template <class T> inline T sigmoid(T x) {
  if constexpr (std::is_same_v<T, float>) return fast::sigmoid_f32(x);
  else return T(1) / (T(1) + std::exp(-x));
}
template <class T> inline T tanh_(T x) {
  if constexpr (std::is_same_v<T, float>) return fast::tanh_f32(x);
  else return std::tanh(x);
}

// One LSTM step's gates, fused: from gx_t + h W_hh^T (rows of 4H: i, f, g, o)
// and c_prev, writes the activations, c = f c_prev + i g and h = o tanh(c).
// Operations in the order of the per-op formulas (docs/numerics.md).
template <class T>
LUCID_AVX2_CLONES void lstm_step(const T* __restrict gx, const T* __restrict hw, const T* __restrict c_prev,
                                 T* __restrict act, T* __restrict c, T* __restrict h, int64_t n, int64_t k) {
  for (int64_t r = 0; r < n; ++r) {
    const T* gxr = gx + r * 4 * k;
    const T* hwr = hw + r * 4 * k;
    T* ar = act + r * 4 * k;
    const T* cpr = c_prev + r * k;
    T* cr = c + r * k;
    T* hr = h + r * k;
    for (int64_t j = 0; j < k; ++j) {
      T i = sigmoid(gxr[j] + hwr[j]);
      T f = sigmoid(gxr[k + j] + hwr[k + j]);
      T g = tanh_(gxr[2 * k + j] + hwr[2 * k + j]);
      T o = sigmoid(gxr[3 * k + j] + hwr[3 * k + j]);
      T fc = f * cpr[j];
      T ig = i * g;
      T cn = fc + ig;
      ar[j] = i, ar[k + j] = f, ar[2 * k + j] = g, ar[3 * k + j] = o;
      cr[j] = cn;
      hr[j] = o * tanh_(cn);
    }
  }
}

// One LSTM step backwards, fused: dh (d_out of this step already added) and
// dc carried from the later step -> the gate gradients d (rows of 4H); dc
// becomes the gradient reaching c_prev (dc f). dh is left for the caller's gemm.
template <class T>
LUCID_AVX2_CLONES void lstm_step_back(const T* __restrict act, const T* __restrict c, const T* __restrict c_prev,
                                      T* __restrict dh, T* __restrict dc, T* __restrict d, int64_t n, int64_t k) {
  for (int64_t r = 0; r < n; ++r) {
    const T* ar = act + r * 4 * k;
    T* drow = d + r * 4 * k;
    const int64_t b = r * k;
    for (int64_t j = 0; j < k; ++j) {
      T i = ar[j], f = ar[k + j], g = ar[2 * k + j], o = ar[3 * k + j];
      T dht = dh[b + j];
      T tc = tanh_(c[b + j]);
      T dct = dc[b + j] + (dht * o) * (T(1) - tc * tc);
      drow[j] = ((dct * g) * i) * (T(1) - i);
      drow[k + j] = ((dct * c_prev[b + j]) * f) * (T(1) - f);
      drow[2 * k + j] = (dct * i) * (T(1) - g * g);
      drow[3 * k + j] = ((dht * tc) * o) * (T(1) - o);
      dc[b + j] = dct * f;
    }
  }
}

// One GRU step's gates, fused: from gx_t (rows of 3H: r, z, n) and
// gh = h W_hh^T + b_hh, writes r, z, n, hn = gh's n part and
// h = n + z (h_prev - n), in the order of the per-op formulas.
template <class T>
LUCID_AVX2_CLONES void gru_step(const T* __restrict gx, const T* __restrict gh,
                                const T* __restrict h_prev, T* __restrict act, T* __restrict hn,
                                T* __restrict h, int64_t n, int64_t k) {
  for (int64_t r = 0; r < n; ++r) {
    const T* gxr = gx + r * 3 * k;
    const T* ghr = gh + r * 3 * k;
    T* ar = act + r * 3 * k;
    const int64_t b = r * k;
    for (int64_t j = 0; j < k; ++j) {
      T rg = sigmoid(gxr[j] + ghr[j]);
      T z = sigmoid(gxr[k + j] + ghr[k + j]);
      T hv = ghr[2 * k + j];
      T nv = tanh_(gxr[2 * k + j] + rg * hv);
      ar[j] = rg, ar[k + j] = z, ar[2 * k + j] = nv;
      hn[b + j] = hv;
      h[b + j] = nv + z * (h_prev[b + j] - nv);
    }
  }
}

// One GRU step backwards, fused: dh (d_out of this step already added) ->
// the gradients of gx_t (d_gx) and of gh (d_gh, whose n part carries the
// extra factor r); dh becomes dh z, the direct path to h_prev (the caller's
// gemm adds d_gh W_hh).
template <class T>
LUCID_AVX2_CLONES void gru_step_back(const T* __restrict act, const T* __restrict hn,
                                     const T* __restrict h_prev, T* __restrict dh, T* __restrict d_gx,
                                     T* __restrict d_gh, int64_t n, int64_t k) {
  for (int64_t r = 0; r < n; ++r) {
    const T* ar = act + r * 3 * k;
    T* dxr = d_gx + r * 3 * k;
    T* dhr = d_gh + r * 3 * k;
    const int64_t b = r * k;
    for (int64_t j = 0; j < k; ++j) {
      T rg = ar[j], z = ar[k + j], nv = ar[2 * k + j];
      T dht = dh[b + j];
      T dn = (dht * (T(1) - z)) * (T(1) - nv * nv);
      T dr = ((dn * hn[b + j]) * rg) * (T(1) - rg);
      T dz = ((dht * (h_prev[b + j] - nv)) * z) * (T(1) - z);
      dxr[j] = dr, dxr[k + j] = dz, dxr[2 * k + j] = dn;
      dhr[j] = dr, dhr[k + j] = dz, dhr[2 * k + j] = dn * rg;
      dh[b + j] = dht * z;
    }
  }
}

// y += x: a step's output gradient into the carried one, the hidden bias into gh.
template <class T>
LUCID_AVX2_CLONES void add_into(T* __restrict y, const T* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] + x[i];
}

template <class T>
void lstm_layer_forward_t(const Tensor& gx, const Tensor& w_hh, const Tensor& h0, const Tensor& c0, bool reverse,
                          const Tensor& out, const Tensor& h_n, const Tensor& c_n, const Tensor& acts,
                          const Tensor& cells) {
  const int64_t L = gx.size(0), n = gx.size(1), k = h0.size(1), nk = n * k, nk4 = 4 * nk;
  const T* gxp = gx.data<T>();
  const T* w = w_hh.data<T>();
  T* outp = out.data<T>();
  T* actp = acts.data<T>();
  T* cellp = cells.data<T>();
  std::vector<T> hw(static_cast<size_t>(nk4));
  const T* h = h0.data<T>();
  const T* c = c0.data<T>();
  for (int64_t step = 0; step < L; ++step) {
    const int64_t s = reverse ? L - 1 - step : step;
    blas::gemm(false, true, n, 4 * k, k, T(1), h, k, w, k, T(0), hw.data(), 4 * k);  // h W_hh^T
    lstm_step(gxp + s * nk4, hw.data(), c, actp + s * nk4, cellp + s * nk, outp + s * nk, n, k);
    h = outp + s * nk;
    c = cellp + s * nk;
  }
  std::memcpy(h_n.data<T>(), h, sizeof(T) * nk);
  std::memcpy(c_n.data<T>(), c, sizeof(T) * nk);
}

template <class T>
void lstm_layer_backward_t(const Tensor& d_out, const Tensor& d_h_n, const Tensor& d_c_n, const Tensor& w_hh,
                           const Tensor& h0, const Tensor& c0, const Tensor& out, const Tensor& acts,
                           const Tensor& cells, bool reverse, const Tensor& d_gx, const Tensor& d_w,
                           const Tensor& d_h0, const Tensor& d_c0) {
  const int64_t L = out.size(0), n = out.size(1), k = out.size(2), nk = n * k, nk4 = 4 * nk;
  const T* dop = d_out.defined() ? d_out.data<T>() : nullptr;
  const T* w = w_hh.data<T>();
  const T* outp = out.data<T>();
  const T* actp = acts.data<T>();
  const T* cellp = cells.data<T>();
  T* dg = d_gx.data<T>();
  // d_h0 / d_c0 carry dh and dc through the steps and end as the state gradients.
  T* dh = d_h0.data<T>();
  T* dc = d_c0.data<T>();
  if (d_h_n.defined()) std::memcpy(dh, d_h_n.data<T>(), sizeof(T) * nk);
  else std::fill(dh, dh + nk, T(0));
  if (d_c_n.defined()) std::memcpy(dc, d_c_n.data<T>(), sizeof(T) * nk);
  else std::fill(dc, dc + nk, T(0));
  for (int64_t step = L - 1; step >= 0; --step) {
    const int64_t s = reverse ? L - 1 - step : step;
    const int64_t prev = reverse ? s + 1 : s - 1;  // the step that ran before s
    const T* c_prev = step == 0 ? c0.data<T>() : cellp + prev * nk;
    if (dop) add_into(dh, dop + s * nk, nk);
    lstm_step_back(actp + s * nk4, cellp + s * nk, c_prev, dh, dc, dg + s * nk4, n, k);
    blas::gemm(false, false, n, k, 4 * k, T(1), dg + s * nk4, 4 * k, w, k, T(0), dh, k);  // d W_hh
  }
  // dW_hh = sum over steps of d_t^T h_prev(t): the first step read h0, every
  // other step the output of its neighbour, so two gemms cover all steps.
  const int64_t first = reverse ? L - 1 : 0;
  const T* d_rest = reverse ? dg : dg + nk4;
  const T* h_rest = reverse ? outp + nk : outp;
  T* dw = d_w.data<T>();
  blas::gemm(true, false, 4 * k, k, n, T(1), dg + first * nk4, 4 * k, h0.data<T>(), k, T(0), dw, k);
  blas::gemm(true, false, 4 * k, k, (L - 1) * n, T(1), d_rest, 4 * k, h_rest, k, T(1), dw, k);
}

template <class T>
void gru_layer_forward_t(const Tensor& gx, const Tensor& w_hh, const Tensor& b_hh, const Tensor& h0, bool reverse,
                         const Tensor& out, const Tensor& h_n, const Tensor& acts, const Tensor& hn) {
  const int64_t L = gx.size(0), n = gx.size(1), k = h0.size(1), nk = n * k, nk3 = 3 * nk;
  const T* gxp = gx.data<T>();
  const T* w = w_hh.data<T>();
  const T* bias = b_hh.defined() ? b_hh.data<T>() : nullptr;
  T* outp = out.data<T>();
  T* actp = acts.data<T>();
  T* hnp = hn.data<T>();
  std::vector<T> gh(static_cast<size_t>(nk3));
  const T* h = h0.data<T>();
  for (int64_t step = 0; step < L; ++step) {
    const int64_t s = reverse ? L - 1 - step : step;
    blas::gemm(false, true, n, 3 * k, k, T(1), h, k, w, k, T(0), gh.data(), 3 * k);  // h W_hh^T
    if (bias)
      for (int64_t r = 0; r < n; ++r) add_into(gh.data() + r * 3 * k, bias, 3 * k);
    gru_step(gxp + s * nk3, gh.data(), h, actp + s * nk3, hnp + s * nk, outp + s * nk, n, k);
    h = outp + s * nk;
  }
  std::memcpy(h_n.data<T>(), h, sizeof(T) * nk);
}

template <class T>
void gru_layer_backward_t(const Tensor& d_out, const Tensor& d_h_n, const Tensor& w_hh, const Tensor& h0,
                          const Tensor& out, const Tensor& acts, const Tensor& hn, bool reverse, const Tensor& d_gx,
                          const Tensor& d_w, const Tensor& d_b, const Tensor& d_h0) {
  const int64_t L = out.size(0), n = out.size(1), k = out.size(2), nk = n * k, nk3 = 3 * nk;
  const T* dop = d_out.defined() ? d_out.data<T>() : nullptr;
  const T* w = w_hh.data<T>();
  const T* outp = out.data<T>();
  const T* actp = acts.data<T>();
  const T* hnp = hn.data<T>();
  T* dgx = d_gx.data<T>();
  std::vector<T> dgh(static_cast<size_t>(L * nk3));
  T* dh = d_h0.data<T>();  // carries dh through the steps, ends as d_h0
  if (d_h_n.defined()) std::memcpy(dh, d_h_n.data<T>(), sizeof(T) * nk);
  else std::fill(dh, dh + nk, T(0));
  for (int64_t step = L - 1; step >= 0; --step) {
    const int64_t s = reverse ? L - 1 - step : step;
    const int64_t prev = reverse ? s + 1 : s - 1;
    const T* h_prev = step == 0 ? h0.data<T>() : outp + prev * nk;
    if (dop) add_into(dh, dop + s * nk, nk);
    gru_step_back(actp + s * nk3, hnp + s * nk, h_prev, dh, dgx + s * nk3, dgh.data() + s * nk3, n, k);
    blas::gemm(false, false, n, k, 3 * k, T(1), dgh.data() + s * nk3, 3 * k, w, k, T(1), dh, k);  // + d_gh W_hh
  }
  // dW_hh = sum over steps of d_gh_t^T h_prev(t), as for the LSTM: two gemms.
  const int64_t first = reverse ? L - 1 : 0;
  const T* d_rest = reverse ? dgh.data() : dgh.data() + nk3;
  const T* h_rest = reverse ? outp + nk : outp;
  T* dw = d_w.data<T>();
  blas::gemm(true, false, 3 * k, k, n, T(1), dgh.data() + first * nk3, 3 * k, h0.data<T>(), k, T(0), dw, k);
  blas::gemm(true, false, 3 * k, k, (L - 1) * n, T(1), d_rest, 3 * k, h_rest, k, T(1), dw, k);
  if (d_b.defined()) {  // d_b_hh = the column sums of d_gh over every step and row
    T* db = d_b.data<T>();
    std::fill(db, db + 3 * k, T(0));
    for (int64_t row = 0; row < L * n; ++row) add_into(db, dgh.data() + row * 3 * k, 3 * k);
  }
}

}  // namespace

// Each entry point runs the float64 kernel for float64 tensors, else the float32
// one (ops widens half-precision inputs to float32 first).

void lstm_layer_forward(const Tensor& gx, const Tensor& w_hh, const Tensor& h0, const Tensor& c0, bool reverse,
                        const Tensor& out, const Tensor& h_n, const Tensor& c_n, const Tensor& acts,
                        const Tensor& cells) {
  if (gx.dtype() == DType::Float64)
    lstm_layer_forward_t<double>(gx, w_hh, h0, c0, reverse, out, h_n, c_n, acts, cells);
  else lstm_layer_forward_t<float>(gx, w_hh, h0, c0, reverse, out, h_n, c_n, acts, cells);
}

void lstm_layer_backward(const Tensor& d_out, const Tensor& d_h_n, const Tensor& d_c_n, const Tensor& w_hh,
                         const Tensor& h0, const Tensor& c0, const Tensor& out, const Tensor& acts,
                         const Tensor& cells, bool reverse, const Tensor& d_gx, const Tensor& d_w,
                         const Tensor& d_h0, const Tensor& d_c0) {
  if (out.dtype() == DType::Float64)
    lstm_layer_backward_t<double>(d_out, d_h_n, d_c_n, w_hh, h0, c0, out, acts, cells, reverse, d_gx, d_w, d_h0, d_c0);
  else
    lstm_layer_backward_t<float>(d_out, d_h_n, d_c_n, w_hh, h0, c0, out, acts, cells, reverse, d_gx, d_w, d_h0, d_c0);
}

void gru_layer_forward(const Tensor& gx, const Tensor& w_hh, const Tensor& b_hh, const Tensor& h0, bool reverse,
                       const Tensor& out, const Tensor& h_n, const Tensor& acts, const Tensor& hn) {
  if (gx.dtype() == DType::Float64) gru_layer_forward_t<double>(gx, w_hh, b_hh, h0, reverse, out, h_n, acts, hn);
  else gru_layer_forward_t<float>(gx, w_hh, b_hh, h0, reverse, out, h_n, acts, hn);
}

void gru_layer_backward(const Tensor& d_out, const Tensor& d_h_n, const Tensor& w_hh, const Tensor& h0,
                        const Tensor& out, const Tensor& acts, const Tensor& hn, bool reverse, const Tensor& d_gx,
                        const Tensor& d_w, const Tensor& d_b, const Tensor& d_h0) {
  if (out.dtype() == DType::Float64)
    gru_layer_backward_t<double>(d_out, d_h_n, w_hh, h0, out, acts, hn, reverse, d_gx, d_w, d_b, d_h0);
  else gru_layer_backward_t<float>(d_out, d_h_n, w_hh, h0, out, acts, hn, reverse, d_gx, d_w, d_b, d_h0);
}

}  // namespace lucid::cpu
