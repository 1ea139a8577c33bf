// sum and mean run and recorded in C++ (node.h): `_C.autograd_sum(x, dims,
// keepdim, dtype)` / `_C.autograd_mean(x, dims, keepdim)` run the `ops::`
// kernel and, when grad mode is on and x requires grad (and the result is
// floating point), attach SumBackward / MeanBackward. The first-order
// backward is here, against `ops::` (the gradient broadcast back over the
// reduced axes, cast to the input's dtype / divided by the count); under
// create_graph the walk calls lucid/_ops/reduction.py's `_Sum` / `_Mean`.
//
// The same for `_C.autograd_var(x, dims, correction, keepdim)` (VarBackward:
// g times 2 (x - mean) / (n - correction)), `_C.autograd_prod(x, dims,
// keepdim, dtype)` (ProdBackward: g times the product of the others),
// `_C.autograd_amax` / `_amin(x, dims, keepdim)` (AmaxBackward /
// AminBackward: ties share g) and `_C.autograd_max_dim` / `_min_dim(x, dim,
// keepdim)` ((values, indices); MaxBackward / MinBackward, two outputs: g
// goes to the returned index). Their create_graph formulas are `_Var`,
// `_Prod`, `_Extreme` and `_ExtremeDim`.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_reduction(pybind11::module_& m);

}  // namespace lucid::autograd
