// Dtype casts, device moves and clone run and recorded in C++ (node.h):
// `_C.autograd_to(x, dtype, device, copy)` (ops::to_device, then ops::astype,
// or ops::clone when `copy` and nothing moved) and `_C.autograd_clone(x)` run
// the `ops::` kernel and, when grad mode is on, x requires grad and the
// result is floating point, attach ToBackward / CloneBackward. The
// first-order backward is here, against `ops::` (the gradient moved back to
// the input's device and cast back to its dtype; clone's passes through);
// under create_graph the walk calls lucid/_ops/copy.py's `_To` / `_Clone`.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_copy(pybind11::module_& m);

}  // namespace lucid::autograd
