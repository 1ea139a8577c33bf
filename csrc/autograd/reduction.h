// sum and mean run and recorded in C++ (node.h): `_C.autograd_sum(x, dims,
// keepdim, dtype)` / `_C.autograd_mean(x, dims, keepdim)` run the `ops::`
// kernel and, when grad mode is on and x requires grad (and the result is
// floating point), attach SumBackward / MeanBackward. The first-order
// backward is here, against `ops::` (the gradient broadcast back over the
// reduced axes, cast to the input's dtype / divided by the count); under
// create_graph the walk calls lucid/_ops/reduction.py's `_Sum` / `_Mean`.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_reduction(pybind11::module_& m);

}  // namespace lucid::autograd
