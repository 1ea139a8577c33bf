// The unary ops of lucid/_ops/elementwise.py's `_Unary` (neg, abs, sign,
// relu, exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid, erf, floor, ceil,
// round; trig.py, floating.py and special.py: tan sinh cosh trunc exp2 erfc erfinv asin acos atan
// asinh acosh atanh frac log10 lgamma sinc digamma; special.py's log1p expm1
// log2),
// run and recorded in C++ like arithmetic.h's: `_C.autograd_unary(x,
// name)` runs the `ops::` kernel and, when grad mode is on and x requires
// grad, attaches a CppNode (ExpBackward ...) saving (x, y). Its first-order
// backward is here, against `ops::`; under create_graph the walk calls
// `_Unary.backward`, whose formula (the same operations in the same order)
// is recorded lucid ops. digamma's gradient, polygamma(1, x), is special.h's
// composition (gamma.py registers the order-1 plan at import).
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

// Adds `autograd_unary` and `_register_unary` to `m`.
void init_unary(pybind11::module_& m);

}  // namespace lucid::autograd
