// reshape / view, permute and expand run and recorded in C++ (node.h):
// `_C.autograd_reshape(x, shape, must_view)` (ops::reshape, or ops::view,
// which never copies), `_C.autograd_permute(x, dims)` and
// `_C.autograd_expand(x, shape)` run the `ops::` view and, when grad mode is
// on and x requires grad, attach ReshapeBackward / PermuteBackward /
// ExpandBackward. Their first-order backward is here, against `ops::` (the
// gradient reshaped back, permuted by the inverse order, summed over the
// broadcast axes); under create_graph the walk calls lucid/_ops/shape.py's
// `_Reshape` / `_Permute` / `_Expand`.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_shape(pybind11::module_& m);

}  // namespace lucid::autograd
