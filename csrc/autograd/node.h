// Graph nodes recorded in C++: each differentiable ops:: entry point records
// its node, whose backward is written against ops::.
//
// A CppNode is a Python object with the attributes the backward walk and
// lucid.autograd read from any node (`function`, `ctx`, `inputs`, `edges`,
// `num_outputs`, `name()`); it is also its own ctx for the op's Python
// Function (`needs_input_grad`, `saved_tensors` with the in-place checks,
// `meta`, `op`). What differs per op is its NodeKind: the name, the Python
// Function whose recorded formula serves create_graph, and the first-order
// formula against `ops::` that the walk (engine.cpp) runs without Python.
// Every file of csrc/autograd/ but tensor_object, grad_mode, node and engine
// is an op family recording this way (docs/architecture.md lists
// them and their ops).
#pragma once
#include <pybind11/pybind11.h>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/tensor_object.h"
#include "core/tensor.h"
#include "ops/scalar.h"

namespace lucid::autograd {

namespace py = pybind11;

struct CppNode;

// A first-order backward's result per input: a new gradient, or `pass` (the
// incoming gradient as it is, e.g. add's), or nothing (not needed). Sized for
// three inputs unless told more (cat's node has one per joined tensor).
struct InputGrads {
  explicit InputGrads(size_t num_inputs = 3) : grad(num_inputs), pass(num_inputs, 0) {}
  std::vector<std::optional<Tensor>> grad;
  std::vector<char> pass;
};

struct NodeKind {
  const char* name;  // "MulBackward": grad_fn.name()
  const char* op;    // "mul": ctx.op, what the Python formula reads
  // Set by the op family's `_register_*` (lucid/_ops/elementwise.py): the
  // Python Function; never released.
  PyObject* function;
  // The gradients of the inputs for the output's gradient `g`, nothing
  // recorded. Saved operands have passed check_saved by then. Null (and no
  // `backward_outputs`) for the few kinds whose formula is their Python
  // Function's at every order: the multi-output decompositions
  // (decomposition.cpp), whose long closed forms are dominated by O(n^3)
  // kernels and written once, in lucid ops.
  InputGrads (*backward)(const CppNode& node, const Tensor& g);
  // A broadcasting two-input op (+ - * /): cpp_backward sums each gradient
  // back to its input's shape and casts it to its dtype.
  bool broadcasts = false;
  // A node of several outputs (record_outputs) has this formula instead of
  // `backward`: the gradient of each output, empty where none reached it.
  InputGrads (*backward_outputs)(const CppNode& node, const std::vector<std::optional<Tensor>>& grads) = nullptr;
};

struct CppNode {
  PyObject_HEAD
  NodeKind* kind;
  int num_inputs;   // at least 1
  int num_outputs;  // 1, or more for a node made by record_outputs
  int num_saved;    // how many tensors the formula reads (they stay counted after `_saved = ()`)
  bool released;    // backward went through without retain_graph
  bool same_meta;   // two inputs of one shape and dtype: gradients fit as they are
  Shape shapes[2];  // the inputs', when !same_meta
  DType dtypes[2];
  PyObject* inputs;  // per input: the tensor when it needs a gradient, else None
  PyObject* edges;   // per input: (its grad_fn, its output number) or None
  PyObject* needs;   // needs_input_grad: a tuple of bools
  PyObject* saved;   // the tensors the formula reads, as saved (None where not)
  // Each saved tensor's engine tensor and its memory's version when saved.
  Tensor saved_handles[4];
  int64_t saved_versions[4];
  // One-input ops that change the shape (reductions, reshape): the input's
  // shape and dtype and the reduced axes (None: all), which their formulas
  // read (as ctx.shape / ctx.in_shape, ctx.in_dtype, ctx.dims in Python).
  Shape input_shape;
  DType input_dtype;
  std::optional<std::vector<int64_t>> dims;
  // Basic indexing (basic_index.cpp): the slices x[idx] read, as starts, steps,
  // lengths and the result's shape.
  std::vector<std::vector<int64_t>> index_plan;
  // The integer arguments an op's formula reads (conv.cpp: conv geometry,
  // pool.cpp: windows, embedding.cpp: rows; shape.cpp: cat's joined sizes), as `ctx.params`
  // (a tuple of ints) in Python, and as `ctx.sizes` for cat.
  std::vector<int64_t> params;
  // Number arguments the formula reads (softplus: beta, threshold; layer_norm:
  // eps), as `ctx.scalars` (and `ctx.eps`, scalars[0]).
  double scalars[2];
  // Tensors the formula reads that only the node holds (the recurrent layers'
  // saved activations): no version check, freed with `_saved = ()`.
  std::vector<Tensor> buffers;
  PyObject* weakrefs;
};

bool is_cpp_node(PyObject* node);

// ----- what every op family's entry and formulas share ------------------------------

// Whether an op over `inputs` (tensor objects; Py_None for an absent optional
// one) records a node for its result `out` (a tensor object): grad mode on, an
// input requiring grad and a floating-point result, as Function.apply decides.
inline bool records(std::initializer_list<PyObject*> inputs, PyObject* out) {
  if (!grad_enabled() || !is_floating(tensor_object(out)->handle.dtype())) return false;
  for (PyObject* t : inputs)
    if (t != Py_None && tensor_object(t)->requires_grad) return true;
  return false;
}
// params[at, at + n): an integer argument a formula reads back from `params`.
inline std::vector<int64_t> params_slice(const std::vector<int64_t>& p, size_t at, size_t n) {
  const auto first = p.begin() + static_cast<std::ptrdiff_t>(at);
  return std::vector<int64_t>(first, first + static_cast<std::ptrdiff_t>(n));
}
// Integer arguments one after the other, as a recording stores them in `params`.
inline std::vector<int64_t> params_join(std::initializer_list<const std::vector<int64_t>*> parts) {
  std::vector<int64_t> r;
  for (const std::vector<int64_t>* p : parts) r.insert(r.end(), p->begin(), p->end());
  return r;
}

// Whether the node's input i needs a gradient (`needs_input_grad[i]`).
inline bool needs(const CppNode& n, int i) { return PyTuple_GET_ITEM(n.needs, i) == Py_True; }
// math.pi, as the Python formulas the C++ ones follow read it.
inline constexpr double kPi = 3.141592653589793;

// A Python number next to `like` in a formula, as lucid's ops coerce it
// (ops/scalar.h, PyTorch's weak scalars): `x * 0.5` a real, `where(m, g, 0)`
// an integer.
inline Tensor real(double v, const Tensor& like) { return ops::scalar_tensor(v, ops::ScalarKind::Real, like); }
inline Tensor integer(double v, const Tensor& like) { return ops::scalar_tensor(v, ops::ScalarKind::Integer, like); }
// A CppNode whose kind has a first-order formula in C++ (the walk runs it
// unless create_graph).
bool has_cpp_formula(PyObject* node);

// Makes `out` (a new tensor object) the output of a new node of `kind` over
// `inputs` (tensor objects, at least one requiring grad, or Py_None for an
// absent optional argument), saving `saved` (tensor objects or Py_None; at
// most four).
// Returns the node (owned by `out`), for the caller to fill what its kind reads.
CppNode& record_node(NodeKind& kind, PyObject* const* inputs, int num_inputs, PyObject* const* saved,
                     int num_saved, PyObject* out);

// The same for an op with several outputs: output i (a tensor object) gets
// grad_fn = the node and output number i, when it is floating point (as
// Function.apply marks them) and not null (a null entry: an output that takes
// no gradient, slogdet's sign); `kind` has `backward_outputs` or no C++ formula. Formulas that
// read `buffers` must also save a tensor (num_saved > 0): the check that the
// graph was not freed runs only then.
CppNode& record_outputs(NodeKind& kind, PyObject* const* inputs, int num_inputs, PyObject* const* saved,
                        int num_saved, PyObject* const* outputs, int num_outputs);

// Raises RuntimeError, as lucid.autograd.FunctionCtx.saved_tensors does, when
// the graph was freed or a saved tensor was written or rebound since.
void check_saved(const CppNode& node);

// The node's input gradients for the gradients `grads` of its outputs (a
// tuple, None where no gradient reached an output), nothing recorded: a tuple
// with a tensor or None per input (a broadcasting kind's summed back to their
// input's shape and cast to its dtype).
py::object cpp_backward(PyObject* node, const py::tuple& grads);

// A broadcast gradient summed back to `shape` (lucid._ops.common.sum_to_shape:
// over the leading axes and the axes `shape` has as 1, then reshaped).
Tensor sum_to_shape(const Tensor& g, const Shape& shape);

// Readies the CppNode type and adds it to `m`.
void init_node(py::module_& m);

}  // namespace lucid::autograd
