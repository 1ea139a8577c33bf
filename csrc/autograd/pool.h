// The 2-D pools run and recorded in C++ (node.h): `_C.autograd_max_pool2d`
// (values and indices), `_C.autograd_avg_pool2d` and
// `_C.autograd_adaptive_avg_pool2d` run the ops:: kernel and, when grad mode
// is on and x requires grad, attach MaxPool2dBackward / AvgPool2dBackward /
// AdaptiveAvgPool2dBackward holding the saved tensors and, in `params`, the
// window. The first-order backward is the ops:: backward kernel, as
// lucid/_ops/nn.py's Functions call it; under create_graph the walk runs those
// Functions' recorded formulas (through `_PoolGrad`).
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_pool(pybind11::module_& m);
// The Python Functions (`_C._register_nn`, bindings/autograd.cpp) whose
// recorded formulas serve create_graph.
void register_pool(pybind11::object max_pool2d, pybind11::object avg_pool2d, pybind11::object adaptive_avg_pool2d);

}  // namespace lucid::autograd
