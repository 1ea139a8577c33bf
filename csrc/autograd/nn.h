// conv2d, conv_transpose2d, the 2-D pools and embedding run and recorded in
// C++ (node.h):
// `_C.autograd_conv2d(x, weight, bias, stride, padding, dilation, groups, fn)`,
// `_C.autograd_conv_transpose2d(x, weight, bias, stride, padding, dilation,
// groups, out_shape)`,
// `_C.autograd_max_pool2d(...)` (values and indices), `_C.autograd_avg_pool2d`,
// `_C.autograd_adaptive_avg_pool2d`, `_C.autograd_embedding` run the ops::
// kernel and, when grad mode is on and an input requires grad, attach a node
// (Conv2dBackward, ConvTranspose2dBackward, MaxPool2dBackward, ...) holding
// what its formula reads: the saved tensors and, in `params`, the integer
// arguments (conv geometry, pool window, embedding rows). The first-order backward is the ops:: backward
// kernel, as lucid/_ops/nn.py's Functions call it; under create_graph the walk
// runs those Functions' recorded formulas (the pools' through `_PoolGrad`).
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_nn(pybind11::module_& m);

}  // namespace lucid::autograd
