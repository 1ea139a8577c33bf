// GPU-stream recurrent layers: an LSTM or GRU layer's time loop as a chain of MLX
// ops (lazy: one graph per call, evaluated when read), the CPU stream's
// formulas op for op.
#pragma once
#include <tuple>

#include "core/tensor.h"

namespace lucid::gpu {

// See ops::lstm_layer_forward: (out, h_n, c_n, acts, cells).
std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> lstm_layer_forward(const Tensor& gx, const Tensor& w_hh,
                                                                      const Tensor& h0, const Tensor& c0,
                                                                      bool reverse);
// See ops::lstm_layer_backward; undefined d_out / d_h_n / d_c_n are zero.
// Returns (d_gx, d_w_hh, d_h0, d_c0).
std::tuple<Tensor, Tensor, Tensor, Tensor> lstm_layer_backward(const Tensor& d_out, const Tensor& d_h_n,
                                                               const Tensor& d_c_n, const Tensor& w_hh,
                                                               const Tensor& h0, const Tensor& c0, const Tensor& out,
                                                               const Tensor& acts, const Tensor& cells,
                                                               bool reverse);

// See ops::gru_layer_forward (b_hh may be undefined): (out, h_n, acts, hn).
std::tuple<Tensor, Tensor, Tensor, Tensor> gru_layer_forward(const Tensor& gx, const Tensor& w_hh, const Tensor& b_hh,
                                                             const Tensor& h0, bool reverse);
// See ops::gru_layer_backward: (d_gx, d_w_hh, d_b_hh or undefined, d_h0).
std::tuple<Tensor, Tensor, Tensor, Tensor> gru_layer_backward(const Tensor& d_out, const Tensor& d_h_n,
                                                              const Tensor& w_hh, bool has_bias, const Tensor& h0,
                                                              const Tensor& out, const Tensor& acts, const Tensor& hn,
                                                              bool reverse);

}  // namespace lucid::gpu
