// CPU-stream recurrent layers: the time loop of an LSTM or GRU layer in C++, per
// step one gemm (h W_hh^T) and one fused loop over the gates. Contiguous
// float32 or float64 tensors of one dtype, shapes already validated by
// ops/recurrent.cpp.
#pragma once
#include "core/tensor.h"

namespace lucid::cpu {

// See ops::lstm_layer_forward. out, h_n, c_n, acts, cells are written.
void lstm_layer_forward(const Tensor& gx, const Tensor& w_hh, const Tensor& h0, const Tensor& c0, bool reverse,
                        const Tensor& out, const Tensor& h_n, const Tensor& c_n, const Tensor& acts,
                        const Tensor& cells);
// See ops::lstm_layer_backward. d_out / d_h_n / d_c_n may be undefined (zero);
// d_gx, d_w, d_h0, d_c0 are written.
void lstm_layer_backward(const Tensor& d_out, const Tensor& d_h_n, const Tensor& d_c_n, const Tensor& w_hh,
                         const Tensor& h0, const Tensor& c0, const Tensor& out, const Tensor& acts,
                         const Tensor& cells, bool reverse, const Tensor& d_gx, const Tensor& d_w,
                         const Tensor& d_h0, const Tensor& d_c0);

// See ops::gru_layer_forward; b_hh may be undefined. out, h_n, acts, hn are written.
void gru_layer_forward(const Tensor& gx, const Tensor& w_hh, const Tensor& b_hh, const Tensor& h0, bool reverse,
                       const Tensor& out, const Tensor& h_n, const Tensor& acts, const Tensor& hn);
// See ops::gru_layer_backward. d_out / d_h_n may be undefined (zero); d_b
// undefined when there is no hidden bias. d_gx, d_w, d_b, d_h0 are written.
void gru_layer_backward(const Tensor& d_out, const Tensor& d_h_n, const Tensor& w_hh, const Tensor& h0,
                        const Tensor& out, const Tensor& acts, const Tensor& hn, bool reverse, const Tensor& d_gx,
                        const Tensor& d_w, const Tensor& d_b, const Tensor& d_h0);

}  // namespace lucid::cpu
