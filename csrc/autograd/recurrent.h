// The recurrent layers run and recorded in C++ (node.h), one node of several
// outputs per layer and direction: `_C.autograd_lstm_layer(gx, w_hh, h0, c0,
// reverse)` -> (out, h_n, c_n) and `_C.autograd_gru_layer(gx, w_hh, b_hh, h0,
// reverse)` -> (out, h_n) run ops::lstm_layer_forward / gru_layer_forward
// and, when grad mode is on and an input requires grad, record LSTMLayerBackward
// / GRULayerBackward, keeping the activations the fused backward kernel reads
// (backpropagation through time, ops::*_layer_backward) in the node. The
// formula is once differentiable: under create_graph its gradients come back
// attached to a node that refuses a second backward (autograd/engine.py).
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_recurrent(pybind11::module_& m);

}  // namespace lucid::autograd
