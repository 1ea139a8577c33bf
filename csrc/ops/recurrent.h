// Recurrent layers as single ops: one call runs a whole LSTM or GRU layer
// (one direction) over all time steps, and one call its backpropagation
// through time. The per-step Python loop these replace paid ~10 op
// dispatches per step; here the loop is C++ (CPU stream: one sgemm plus one
// fused gate loop per step) or a chain of MLX ops (GPU stream).
// Validation lives here, then cpu:: or gpu::. Formulas: docs/numerics.md,
// "Recurrent layers".
#pragma once
#include <optional>
#include <tuple>

#include "core/tensor.h"

namespace lucid::ops {

// One LSTM layer (one direction) over every time step:
// gx (L, N, 4H): the input projection of every step with both biases folded
// in, gates in PyTorch's order i, f, g, o; w_hh (4H, H); h0, c0 (N, H).
// reverse runs the steps from L-1 down to 0 (output stays in time order).
// Returns out (L, N, H), h_n, c_n (N, H), and what the backward needs:
// acts (L, N, 4H) = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o) and
// cells (L, N, H) = c after each step.
std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> lstm_layer_forward(const Tensor& gx, const Tensor& w_hh,
                                                                      const Tensor& h0, const Tensor& c0,
                                                                      bool reverse);
// Gradients of lstm_layer_forward with respect to gx, w_hh, h0 and c0, given
// those of out, h_n and c_n (absent: zero) and the forward's tensors.
std::tuple<Tensor, Tensor, Tensor, Tensor> lstm_layer_backward(
    const std::optional<Tensor>& d_out, const std::optional<Tensor>& d_h_n, const std::optional<Tensor>& d_c_n,
    const Tensor& w_hh, const Tensor& h0, const Tensor& c0, const Tensor& out, const Tensor& acts,
    const Tensor& cells, bool reverse);

// One GRU layer (one direction) over every time step:
// gx (L, N, 3H): the input projection of every step with b_ih, gates in
// PyTorch's order r, z, n; w_hh (3H, H); b_hh (3H,) or absent; h0 (N, H).
// Returns out (L, N, H), h_n (N, H), and for the backward acts (L, N, 3H) =
// r, z, n and hn (L, N, H) = the hidden projection of the n gate, h W_hn^T + b_hn.
std::tuple<Tensor, Tensor, Tensor, Tensor> gru_layer_forward(const Tensor& gx, const Tensor& w_hh,
                                                             const std::optional<Tensor>& b_hh, const Tensor& h0,
                                                             bool reverse);
// Gradients of gru_layer_forward with respect to gx, w_hh, b_hh (absent when
// b_hh was) and h0, given those of out and h_n (absent: zero).
std::tuple<Tensor, Tensor, std::optional<Tensor>, Tensor> gru_layer_backward(
    const std::optional<Tensor>& d_out, const std::optional<Tensor>& d_h_n, const Tensor& w_hh, bool has_bias,
    const Tensor& h0, const Tensor& out, const Tensor& acts, const Tensor& hn, bool reverse);

}  // namespace lucid::ops
