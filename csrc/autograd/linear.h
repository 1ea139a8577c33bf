// linear run and recorded in C++ (node.h): `_C.autograd_linear(x, weight,
// bias)` runs ops::linear and, when grad mode is on and an argument requires
// grad, attaches LinearBackward saving (x, weight). Its first-order backward
// is the fused ops::linear_backward; under create_graph the walk calls
// lucid/_ops/nn.py's `_Linear`, whose recorded formula (matmul, sum) can be
// differentiated again.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_linear(pybind11::module_& m);

}  // namespace lucid::autograd
