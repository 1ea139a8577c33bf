// softmax, log_softmax and layer_norm run and recorded in C++ (node.h), each
// one node over its input(s) instead of the chain of ops it is made of:
// `_C.autograd_softmax(x, dim, log)` runs ops::softmax (amax as a constant
// shift, sub, exp, sum, div; log_softmax: sum, log, sub — the composed form's
// ops and bits, one fused pass per row on the CPU stream) and records
// SoftmaxBackward / LogSoftmaxBackward, whose first-order formula is here:
// y * (g - sum(g * y)) and g - exp(y) * sum(g) over the axis.
// `_C.autograd_layer_norm(x, weight, bias, dims, eps)` runs ops::layer_norm
// (the composed form's ops and bits) and records LayerNormBackward (the closed form of
// lucid/nn/functional/normalization.py's `_LayerNorm`) when the input and parameters
// share a float32 / float64 dtype. Under create_graph the walk calls the
// Python Functions (`_Softmax` in lucid/nn/functional/activation.py, `_LayerNorm`).
// `_C.autograd_batch_norm(x, weight, bias, running_mean, running_var, dims,
// count, momentum, eps)` is train-mode batch_norm: the ops its Python forward
// ran, in that order, the running buffers written in place only after every
// value is computed, and BatchNormTrainBackward (saved: input, xhat, rstd,
// weight) when something needs a gradient.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_normalization(pybind11::module_& m);

}  // namespace lucid::autograd
