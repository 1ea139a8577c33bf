// GPU-stream recurrent layers: the LSTM layer's time loop as a chain of MLX
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

}  // namespace lucid::gpu
