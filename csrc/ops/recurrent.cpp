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

void require_dtype(const Tensor& t, DType want, const std::string& fn, const char* arg) {
  check<TypeError>(t.dtype() == want, fn + "(): argument '" + arg + "' must have the dtype of gx (" +
                                          dtype_name(want) + "), got " + dtype_name(t.dtype()));
}

// The shared checks of an LSTM layer's (gx or out, w_hh, h0, c0): one device,
// one floating dtype, gx (L, N, 4H) with L >= 1, w_hh (4H, H), states (N, H).
// Returns (L, N, H).
std::tuple<int64_t, int64_t, int64_t> check_lstm(const Tensor& seq, int64_t gates, const Tensor& w_hh,
                                                 const Tensor& h0, const Tensor& c0, const std::string& fn,
                                                 const char* seq_name) {
  common_device(fn.c_str(), {&seq, &w_hh, &h0, &c0});
  require_floating(seq, fn, seq_name);
  for (auto [t, name] : {std::pair{&w_hh, "w_hh"}, {&h0, "h0"}, {&c0, "c0"}}) require_dtype(*t, seq.dtype(), fn, name);
  check(h0.ndim() == 2 && h0.size(1) >= 1,
        fn + "(): expected h0 of shape (N, H) with H >= 1, got " + shape_str(h0.shape()));
  const int64_t n = h0.size(0), k = h0.size(1);
  check(seq.ndim() == 3 && seq.size(0) >= 1 && seq.size(1) == n && seq.size(2) == gates * k,
        fn + "(): expected " + seq_name + " of shape (L, N, " + (gates == 1 ? "H" : std::to_string(gates) + "H") +
            ") = (L, " + std::to_string(n) + ", " + std::to_string(gates * k) + ") with L >= 1, got " +
            shape_str(seq.shape()));
  require_shape(w_hh, {4 * k, k}, fn, "w_hh");
  require_shape(c0, {n, k}, fn, "c0");
  return {seq.size(0), n, k};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> lstm_layer_forward(const Tensor& gx, const Tensor& w_hh,
                                                                      const Tensor& h0, const Tensor& c0,
                                                                      bool reverse) {
  const std::string fn = "lstm_layer";
  auto [L, n, k] = check_lstm(gx, 4, w_hh, h0, c0, fn, "gx");
  if (gx.device() == Device::GPU) return gpu::lstm_layer_forward(gx, w_hh, h0, c0, reverse);
  Tensor out = Tensor::empty_cpu({L, n, k}, DType::Float32), acts = Tensor::empty_cpu({L, n, 4 * k}, DType::Float32);
  Tensor cells = Tensor::empty_cpu({L, n, k}, DType::Float32);
  Tensor h_n = Tensor::empty_cpu({n, k}, DType::Float32), c_n = Tensor::empty_cpu({n, k}, DType::Float32);
  cpu::lstm_layer_forward(cpu_f32(gx), cpu_f32(w_hh), cpu_f32(h0), cpu_f32(c0), reverse, out, h_n, c_n, acts, cells);
  const DType t = gx.dtype();
  return {cpu_cast_back(out, t), cpu_cast_back(h_n, t), cpu_cast_back(c_n, t), cpu_cast_back(acts, t),
          cpu_cast_back(cells, t)};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> lstm_layer_backward(
    const std::optional<Tensor>& d_out, const std::optional<Tensor>& d_h_n, const std::optional<Tensor>& d_c_n,
    const Tensor& w_hh, const Tensor& h0, const Tensor& c0, const Tensor& out, const Tensor& acts,
    const Tensor& cells, bool reverse) {
  const std::string fn = "lstm_layer_backward";
  auto [L, n, k] = check_lstm(out, 1, w_hh, h0, c0, fn, "out");
  const DType t = out.dtype();
  common_device(fn.c_str(), {&out, &acts, &cells});
  require_dtype(acts, t, fn, "acts");
  require_dtype(cells, t, fn, "cells");
  require_shape(acts, {L, n, 4 * k}, fn, "acts");
  require_shape(cells, {L, n, k}, fn, "cells");
  for (auto [g, name, shape] : {std::tuple{&d_out, "d_out", Shape{L, n, k}}, {&d_h_n, "d_h_n", Shape{n, k}},
                                {&d_c_n, "d_c_n", Shape{n, k}}}) {
    if (!*g) continue;
    common_device(fn.c_str(), {&out, &**g});
    require_dtype(**g, t, fn, name);
    require_shape(**g, shape, fn, name);
  }
  const Tensor none;
  if (out.device() == Device::GPU)
    return gpu::lstm_layer_backward(d_out ? *d_out : none, d_h_n ? *d_h_n : none, d_c_n ? *d_c_n : none, w_hh, h0,
                                    c0, out, acts, cells, reverse);
  auto f32 = [&](const std::optional<Tensor>& g) { return g ? cpu_f32(*g) : none; };
  Tensor d_gx = Tensor::empty_cpu({L, n, 4 * k}, DType::Float32), d_w = Tensor::empty_cpu({4 * k, k}, DType::Float32);
  Tensor d_h0 = Tensor::empty_cpu({n, k}, DType::Float32), d_c0 = Tensor::empty_cpu({n, k}, DType::Float32);
  cpu::lstm_layer_backward(f32(d_out), f32(d_h_n), f32(d_c_n), cpu_f32(w_hh), cpu_f32(h0), cpu_f32(c0), cpu_f32(out),
                           cpu_f32(acts), cpu_f32(cells), reverse, d_gx, d_w, d_h0, d_c0);
  return {cpu_cast_back(d_gx, t), cpu_cast_back(d_w, t), cpu_cast_back(d_h0, t), cpu_cast_back(d_c0, t)};
}

}  // namespace lucid::ops
