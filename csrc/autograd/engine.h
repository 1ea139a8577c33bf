// The backward walk, in C++: topological order,
// gradient accumulation per (node, output), delivery to leaves, retain_graph,
// and the bookkeeping create_graph needs, over the graph that Python's
// `lucid.autograd.Function` records.
//
// The graph's nodes are still Python objects (`autograd/function.py`: Node,
// _BinaryNode; each has `function`, `ctx`, `inputs`, `edges`, `num_outputs`),
// and each node's backward formula is still a Python staticmethod written in
// lucid ops, so gradients run on whichever stream holds the data. What moves
// here is everything between those calls: the order, the per-edge checks and
// casts, the sums, the delivery. This is the only C++ layer that handles
// Python objects as such; it sits above `ops` and below `bindings`.
//
// The rare paths (tensor hooks, anomaly checks, once_differentiable nodes
// under create_graph, the gradients that `inputs=` asks for) call back into
// `lucid.autograd.engine`, which owns their semantics.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

namespace py = pybind11;

// What `lucid.autograd.engine.run_backward` hands over for one pass. Grad mode
// is set by the caller (off, or on for create_graph) for the whole walk.
struct WalkArgs {
  py::sequence outputs;       // the tensors backward starts from
  py::sequence grad_outputs;  // one gradient per output
  bool retain_graph;
  bool create_graph;
  py::object wanted;   // None, or {id(t): t} for autograd.grad(inputs=...)
  py::dict results;    // filled with {id(t): gradient} when `wanted` is set
  bool hooked;         // some tensor hook is registered anywhere
  bool anomaly;        // anomaly detection is on
  py::dict held;       // leaves with hooks: {id(t): [t, total gradient]}
  py::module_ engine;  // lucid.autograd.engine, for the rare paths
};

// Walks the graph from `outputs`: raises RuntimeError with the same messages
// as PyTorch's engine where it checks (an output without a graph, a backward
// returning too few gradients, a gradient of the wrong shape). Exceptions from
// a node's backward propagate unchanged.
void walk(const WalkArgs& args);

}  // namespace lucid::autograd
