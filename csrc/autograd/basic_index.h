// Basic indexing, `x[idx]` with ints, slices, None and one Ellipsis, run and
// recorded in C++ (node.h): `_C.basic_index(x, idx)` parses the index in one
// pass into the slice plan lucid/_ops/indexing.py builds in Python (same
// starts, steps and lengths, then a reshape that drops int axes and adds None
// axes), returns the same view, and, when grad mode is on and x requires
// grad, attaches BasicIndexBackward. Its first-order backward is here against
// `ops::` (zeros of x's shape with the gradient written where x[idx] read);
// under create_graph the walk calls `_BasicIndex`, whose recorded formula
// reads the node's `plan` (a `_Plan` built from the stored slices).
// Returns None for anything else (tensors, lists, numpy integers, bools) and
// for any index that would raise, so the Python parser handles it and raises
// its usual message.
//
// Also here, over a slice plan the Python parser made: `_C.autograd_setitem`
// (x[idx] = value while recording: a copy of x with the value written, and
// SetItemBackward over (x, value); its first-order backward gives x the
// gradient with zeros where the value went and the value the gradient's
// slices) and `_C.autograd_slice_scatter` (x[idx]'s backward under
// create_graph: SliceScatterBackward, whose gradient is the gradient's own
// x[idx]). Their nodes keep the plan (`plan`) for `_SetItem` / `_SliceScatter`,
// whose formulas serve create_graph. Neither saves a tensor: setitem rebinds
// x to the copy, so no version counter moves.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

struct CppNode;

void init_basic_index(pybind11::module_& m);

// The `plan` a BasicIndexBackward node shows `_BasicIndex.backward`: a new
// lucid/_ops/indexing.py `_Plan` of its slices (a new reference; NULL with the
// error set).
PyObject* index_plan_object(const CppNode& node);

}  // namespace lucid::autograd
