// polygamma run and recorded in C++, and lucid.special.ndtri's graph node
// recorded in C++ (node.h).
//
// `_C.autograd_polygamma(x, n)` runs lucid/_ops/gamma.py's composition
// (docs/numerics.md, "polygamma") op
// for op against ops::, reading per order n the coefficients that need exact
// arithmetic (registered by `_C._polygamma_plan(n, bernoulli, scale, poly)`
// from gamma.py's `_plan`), and records PolygammaBackward (saved: x;
// params[0] n) when x requires grad and grad mode is on. Its first-order
// formula, g * polygamma(n + 1, x), is here; under create_graph the walk calls
// `_Polygamma`.
//
// ndtri's values are a composition of lucid ops (lucid/special.py's
// `_ndtri_values`: a start from erfinv, five Newton steps on log_ndtr), run by
// the Python wrapper without recording; `_C.autograd_ndtri(p, z)` then makes z the output of
// NdtriBackward over p when p requires grad and grad mode is on. Its
// first-order formula is here: g * exp(z * z * 0.5 + ln(2 pi) / 2), with z
// the saved output (the Python formula recomputes ndtri(p): the same ops on
// the same input, so the same bits). Under create_graph the walk calls
// `_Ndtri` (lucid/special.py), which recomputes z recorded.
#pragma once
#include <pybind11/pybind11.h>

#include "core/tensor.h"

namespace lucid::autograd {

// polygamma(n, x)'s values, nothing recorded (the plan of order n >= 1
// registered; RuntimeError otherwise). digamma's gradient (unary.cpp) reads it.
Tensor polygamma(int64_t n, const Tensor& x);

void init_special_autograd(pybind11::module_& m);

}  // namespace lucid::autograd
