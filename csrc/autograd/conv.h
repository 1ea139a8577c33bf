// conv2d and conv_transpose2d run and recorded in C++ (node.h):
// `_C.autograd_conv2d(x, weight, bias, stride, padding, dilation, groups, fn)`
// and `_C.autograd_conv_transpose2d(x, weight, bias, stride, padding,
// dilation, groups, out_shape)` run the ops:: kernel and, when grad mode is on
// and an input requires grad, attach Conv2dBackward / ConvTranspose2dBackward
// saving (x, weight) with the conv geometry in `params`. The first-order
// backward is ops::conv2d_backward, as lucid/_ops/nn.py's Functions call it;
// under create_graph the walk runs those Functions' recorded formulas.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_conv(pybind11::module_& m);
// The Python Functions (`_C._register_nn`, bindings/autograd.cpp) whose
// recorded formulas serve create_graph.
void register_conv(pybind11::object conv2d, pybind11::object conv_transpose2d);

}  // namespace lucid::autograd
