// reshape and view run and recorded in C++ (node.h): `_C.autograd_reshape(x,
// shape, must_view)` runs ops::reshape (or ops::view, which never copies) and,
// when grad mode is on and x requires grad, attaches ReshapeBackward, whose
// first-order backward (here, against `ops::`) reshapes the gradient back to
// the input's shape; under create_graph the walk calls lucid/_ops/shape.py's
// `_Reshape`.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_shape(pybind11::module_& m);

}  // namespace lucid::autograd
