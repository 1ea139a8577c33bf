// The index-driven reads and writes recorded in C++ (node.h): gather,
// index_select, scatter_add, scatter, index_add, index_copy and the values of
// sort / topk / median (a gather at the sorted positions).
//
// `_C.autograd_<op>(x, dim, index[, src])` runs the `ops::` kernel (which
// checks the index's values and shapes, with the messages the Python ops
// always gave) and, when grad mode is on, an input requires grad and the
// result is floating point, attaches the node lucid/_ops/indexing.py's
// Function would have: GatherBackward, IndexSelectBackward,
// ScatterAddBackward, ScatterBackward, IndexAddBackward, IndexCopyBackward;
// `_C.autograd_select(x, indices, dim, name)` attaches SortBackward /
// TopkBackward / MedianBackward (lucid/_ops/sorting.py's `_Select`).
// The index is the node's saved tensor (an in-place write to it before
// backward raises); `ctx.dim` is the axis, `ctx.in_shape` / `ctx.shape` the
// input's shape, `ctx.params` src's shape. The first-order formulas here do
// the Functions' first-order ops in their order; under create_graph the walk
// calls the Functions, whose recorded formulas read those fields.
// The Python functions keep the argument checks (dim wrapped, index an
// integer tensor on the input's device) and pass wrapped dims.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_indexing(pybind11::module_& m);

}  // namespace lucid::autograd
