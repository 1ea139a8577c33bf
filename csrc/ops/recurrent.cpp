#include "ops/recurrent.h"

#include "core/errors.h"
#include "cpu/recurrent.h"
#include "gpu/recurrent.h"
#include "ops/copy.h"
#include "ops/nn_common.h"

namespace lucid::ops {

using namespace nn_detail;

namespace {

void require_shape(const Tensor& t, const Shape& want, const std::string& fn, const char* arg) {
  check(t.shape() == want, fn + "(): expected " + arg + " of shape " + shape_str(want) + ", got " +
                               shape_str(t.shape()));
}

// t must have the dtype `want` of the argument named `ref`.
void require_dtype(const Tensor& t, DType want, const std::string& fn, const char* arg, const char* ref) {
  check<TypeError>(t.dtype() == want, fn + "(): argument '" + arg + "' must have the dtype of " + ref + " (" +
                                          dtype_name(want) + "), got " + dtype_name(t.dtype()));
}

// The shared checks of a layer's (gx or out, w_hh, h0[, c0]): one device,
// one floating dtype, seq (L, N, seq_gates H) with L >= 1, w_hh (gates H, H),
// states (N, H). Returns (L, N, H).
std::tuple<int64_t, int64_t, int64_t> check_layer(const Tensor& seq, int64_t seq_gates, int64_t gates,
                                                  const Tensor& w_hh, const Tensor& h0, const Tensor* c0,
                                                  const std::string& fn, const char* seq_name) {
  if (c0) common_device(fn.c_str(), {&seq, &w_hh, &h0, c0});
  else common_device(fn.c_str(), {&seq, &w_hh, &h0});
  require_floating(seq, fn, seq_name);
  require_dtype(w_hh, seq.dtype(), fn, "w_hh", seq_name);
  require_dtype(h0, seq.dtype(), fn, "h0", seq_name);
  if (c0) require_dtype(*c0, seq.dtype(), fn, "c0", seq_name);
  check(h0.ndim() == 2 && h0.size(1) >= 1,
        fn + "(): expected h0 of shape (N, H) with H >= 1, got " + shape_str(h0.shape()));
  const int64_t n = h0.size(0), k = h0.size(1);
  check(seq.ndim() == 3 && seq.size(0) >= 1 && seq.size(1) == n && seq.size(2) == seq_gates * k,
        fn + "(): expected " + seq_name + " of shape (L, N, " +
            (seq_gates == 1 ? "H" : std::to_string(seq_gates) + "H") + ") = (L, " + std::to_string(n) + ", " +
            std::to_string(seq_gates * k) + ") with L >= 1, got " + shape_str(seq.shape()));
  require_shape(w_hh, {gates * k, k}, fn, "w_hh");
  if (c0) require_shape(*c0, {n, k}, fn, "c0");
  return {seq.size(0), n, k};
}

// The backward's incoming gradients: each absent, or of its output's shape, dtype and device.
void check_grads(std::initializer_list<std::tuple<const std::optional<Tensor>*, const char*, Shape>> grads,
                 const Tensor& like, const std::string& fn) {
  for (auto [g, name, shape] : grads) {
    if (!*g) continue;
    common_device(fn.c_str(), {&like, &**g});
    require_dtype(**g, like.dtype(), fn, name, "out");
    require_shape(**g, shape, fn, name);
  }
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> lstm_layer_forward(const Tensor& gx, const Tensor& w_hh,
                                                                      const Tensor& h0, const Tensor& c0,
                                                                      bool reverse) {
  const std::string fn = "lstm_layer";
  auto [L, n, k] = check_layer(gx, 4, 4, w_hh, h0, &c0, fn, "gx");
  if (gx.device() == Device::GPU) return gpu::lstm_layer_forward(gx, w_hh, h0, c0, reverse);
  const DType t = gx.dtype(), w = cpu_work_dtype(t);
  Tensor out = Tensor::empty_cpu({L, n, k}, w), acts = Tensor::empty_cpu({L, n, 4 * k}, w);
  Tensor cells = Tensor::empty_cpu({L, n, k}, w);
  Tensor h_n = Tensor::empty_cpu({n, k}, w), c_n = Tensor::empty_cpu({n, k}, w);
  cpu::lstm_layer_forward(cpu_work(gx, w), cpu_work(w_hh, w), cpu_work(h0, w), cpu_work(c0, w), reverse, out, h_n, c_n,
                          acts, cells);
  return {cpu_cast_back(out, t), cpu_cast_back(h_n, t), cpu_cast_back(c_n, t), cpu_cast_back(acts, t),
          cpu_cast_back(cells, t)};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> lstm_layer_backward(
    const std::optional<Tensor>& d_out, const std::optional<Tensor>& d_h_n, const std::optional<Tensor>& d_c_n,
    const Tensor& w_hh, const Tensor& h0, const Tensor& c0, const Tensor& out, const Tensor& acts,
    const Tensor& cells, bool reverse) {
  const std::string fn = "lstm_layer_backward";
  auto [L, n, k] = check_layer(out, 1, 4, w_hh, h0, &c0, fn, "out");
  const DType t = out.dtype();
  common_device(fn.c_str(), {&out, &acts, &cells});
  require_dtype(acts, t, fn, "acts", "out");
  require_dtype(cells, t, fn, "cells", "out");
  require_shape(acts, {L, n, 4 * k}, fn, "acts");
  require_shape(cells, {L, n, k}, fn, "cells");
  check_grads({{&d_out, "d_out", Shape{L, n, k}}, {&d_h_n, "d_h_n", Shape{n, k}}, {&d_c_n, "d_c_n", Shape{n, k}}},
              out, fn);
  const Tensor none;
  if (out.device() == Device::GPU)
    return gpu::lstm_layer_backward(d_out ? *d_out : none, d_h_n ? *d_h_n : none, d_c_n ? *d_c_n : none, w_hh, h0,
                                    c0, out, acts, cells, reverse);
  const DType w = cpu_work_dtype(t);
  Tensor d_gx = Tensor::empty_cpu({L, n, 4 * k}, w), d_w = Tensor::empty_cpu({4 * k, k}, w);
  Tensor d_h0 = Tensor::empty_cpu({n, k}, w), d_c0 = Tensor::empty_cpu({n, k}, w);
  cpu::lstm_layer_backward(cpu_work(d_out, w), cpu_work(d_h_n, w), cpu_work(d_c_n, w), cpu_work(w_hh, w),
                           cpu_work(h0, w), cpu_work(c0, w), cpu_work(out, w), cpu_work(acts, w), cpu_work(cells, w),
                           reverse, d_gx, d_w, d_h0, d_c0);
  return {cpu_cast_back(d_gx, t), cpu_cast_back(d_w, t), cpu_cast_back(d_h0, t), cpu_cast_back(d_c0, t)};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> gru_layer_forward(const Tensor& gx, const Tensor& w_hh,
                                                             const std::optional<Tensor>& b_hh, const Tensor& h0,
                                                             bool reverse) {
  const std::string fn = "gru_layer";
  auto [L, n, k] = check_layer(gx, 3, 3, w_hh, h0, nullptr, fn, "gx");
  if (b_hh) {
    common_device(fn.c_str(), {&gx, &*b_hh});
    require_dtype(*b_hh, gx.dtype(), fn, "b_hh", "gx");
    require_shape(*b_hh, {3 * k}, fn, "b_hh");
  }
  if (gx.device() == Device::GPU) return gpu::gru_layer_forward(gx, w_hh, b_hh ? *b_hh : Tensor(), h0, reverse);
  const DType t = gx.dtype(), w = cpu_work_dtype(t);
  Tensor out = Tensor::empty_cpu({L, n, k}, w), acts = Tensor::empty_cpu({L, n, 3 * k}, w);
  Tensor hn = Tensor::empty_cpu({L, n, k}, w), h_n = Tensor::empty_cpu({n, k}, w);
  cpu::gru_layer_forward(cpu_work(gx, w), cpu_work(w_hh, w), cpu_work(b_hh, w), cpu_work(h0, w), reverse, out, h_n,
                         acts, hn);
  return {cpu_cast_back(out, t), cpu_cast_back(h_n, t), cpu_cast_back(acts, t), cpu_cast_back(hn, t)};
}

std::tuple<Tensor, Tensor, std::optional<Tensor>, Tensor> gru_layer_backward(
    const std::optional<Tensor>& d_out, const std::optional<Tensor>& d_h_n, const Tensor& w_hh, bool has_bias,
    const Tensor& h0, const Tensor& out, const Tensor& acts, const Tensor& hn, bool reverse) {
  const std::string fn = "gru_layer_backward";
  auto [L, n, k] = check_layer(out, 1, 3, w_hh, h0, nullptr, fn, "out");
  common_device(fn.c_str(), {&out, &acts, &hn});
  require_dtype(acts, out.dtype(), fn, "acts", "out");
  require_dtype(hn, out.dtype(), fn, "hn", "out");
  require_shape(acts, {L, n, 3 * k}, fn, "acts");
  require_shape(hn, {L, n, k}, fn, "hn");
  check_grads({{&d_out, "d_out", Shape{L, n, k}}, {&d_h_n, "d_h_n", Shape{n, k}}}, out, fn);
  const Tensor none;
  Tensor d_gx, d_w, d_b, d_h0;
  if (out.device() == Device::GPU) {
    std::tie(d_gx, d_w, d_b, d_h0) = gpu::gru_layer_backward(d_out ? *d_out : none, d_h_n ? *d_h_n : none, w_hh,
                                                             has_bias, h0, out, acts, hn, reverse);
  } else {
    const DType t = out.dtype(), w = cpu_work_dtype(t);
    d_gx = Tensor::empty_cpu({L, n, 3 * k}, w), d_w = Tensor::empty_cpu({3 * k, k}, w);
    d_h0 = Tensor::empty_cpu({n, k}, w);
    if (has_bias) d_b = Tensor::empty_cpu({3 * k}, w);
    cpu::gru_layer_backward(cpu_work(d_out, w), cpu_work(d_h_n, w), cpu_work(w_hh, w), cpu_work(h0, w),
                            cpu_work(out, w), cpu_work(acts, w), cpu_work(hn, w), reverse, d_gx, d_w, d_b, d_h0);
    d_gx = cpu_cast_back(d_gx, t), d_w = cpu_cast_back(d_w, t), d_h0 = cpu_cast_back(d_h0, t);
    if (has_bias) d_b = cpu_cast_back(d_b, t);
  }
  std::optional<Tensor> db;
  if (has_bias) db = d_b;
  return {d_gx, d_w, db, d_h0};
}

}  // namespace lucid::ops
