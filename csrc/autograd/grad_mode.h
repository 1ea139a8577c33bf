// Grad mode (lucid.no_grad / enable_grad / set_grad_enabled): whether ops
// record the graph, per thread, on by default in every thread. It lives in
// C++ so that a recording op (autograd/arithmetic.cpp) reads it without
// calling into Python; lucid/autograd/grad_mode.py reads and sets it through
// `_C.is_grad_enabled` / `_C.set_grad_enabled`.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

bool grad_enabled();
void set_grad_enabled(bool on);

// Adds `is_grad_enabled()` and `set_grad_enabled(mode)` (C functions, no
// pybind11 dispatch: they run around every recorded op) to `m`.
void init_grad_mode(pybind11::module_& m);

}  // namespace lucid::autograd
