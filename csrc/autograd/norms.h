// The vector p-norm for a finite p > 0 run and recorded in C++ (node.h):
// `_C.autograd_pnorm(x, p, dims, keepdim)` runs `_pnorm`'s ops (for p = 2
// sqrt(sum(|x| * |x|)), else (sum |x|^p)^(1/p), over `dims`: None for all
// axes) and, when x requires grad and grad mode is on, records NormBackward
// (saved: x and the norm), whose first-order formula is here:
// g * sign(x) |x|^(p-1) / n^(p-1) (x / n for p = 2, sign(x) for p = 1), 0
// where the norm is 0. Under create_graph the walk calls `_PNorm`
// (lucid/_ops/norms.py), which reads ctx.scalars[0] (p), ctx.params[0]
// (keepdim), ctx.dims and ctx.shape (x's shape).
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_norms(pybind11::module_& m);

}  // namespace lucid::autograd
