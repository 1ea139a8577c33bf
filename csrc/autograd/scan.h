// cumsum and cumprod run and recorded in C++ (node.h): `_C.autograd_cumsum(x,
// dim)` / `_C.autograd_cumprod(x, dim)` run the `ops::` scan and, when grad
// mode is on, x requires grad and the result is floating point, attach
// CumsumBackward / CumprodBackward. The first-order backward is here, against
// `ops::` (a reversed cumsum; for cumprod divided by x, or, where x holds a
// zero, one scan per position); under create_graph the walk calls
// lucid/_ops/scan.py's `_Cumsum` / `_Cumprod`.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_scan(pybind11::module_& m);

}  // namespace lucid::autograd
