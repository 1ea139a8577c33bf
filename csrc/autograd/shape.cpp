// reshape / view, permute and expand recorded in C++; see shape.h.
#include "autograd/shape.h"

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// `_Reshape.backward`: reshape(g, input shape), which is g itself when it has that shape.
InputGrads reshape_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  if (g.shape() == n.input_shape)
    r.pass[0] = true;
  else
    r.grad[0] = ops::reshape(g, n.input_shape);
  return r;
}

// `_Permute.backward`: the gradient permuted back by the inverse order.
InputGrads permute_backward(const CppNode& n, const Tensor& g) {
  std::vector<int64_t> inverse(n.dims->size());
  for (size_t i = 0; i < inverse.size(); ++i) inverse[static_cast<size_t>((*n.dims)[i])] = static_cast<int64_t>(i);
  InputGrads r;
  r.grad[0] = ops::permute(g, inverse);
  return r;
}

// `_Expand.backward`: the gradient summed back over the broadcast axes.
InputGrads expand_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = sum_to_shape(g, n.input_shape);
  return r;
}

NodeKind kinds[] = {{"ReshapeBackward", "reshape", nullptr, reshape_backward},
                    {"PermuteBackward", "permute", nullptr, permute_backward},
                    {"ExpandBackward", "expand", nullptr, expand_backward}};

// Attaches a node of `kind` to `out` when x requires grad and grad mode is on
// (x is floating point then, and so is the view); the caller fills what it reads.
CppNode* maybe_record(NodeKind& kind, py::handle x, const py::object& out) {
  if (!tensor_object(x.ptr())->requires_grad || !grad_enabled()) return nullptr;
  PyObject* input = x.ptr();
  return &record_node(kind, &input, 1, nullptr, 0, out.ptr());
}

py::object result(Tensor t) {
  PyObject* o = wrap(std::move(t));
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(o);
}

}  // namespace

void init_shape(py::module_& m) {
  m.def("autograd_reshape", [](py::handle x, const Shape& shape, bool must_view) {
    const Tensor& h = tensor_arg(x.ptr(), must_view ? "view" : "reshape", "input");
    py::object out = result(must_view ? ops::view(h, shape) : ops::reshape(h, shape));
    if (CppNode* n = maybe_record(kinds[0], x, out)) n->input_shape = h.shape();
    return out;
  });
  m.def("autograd_permute", [](py::handle x, const std::vector<int64_t>& dims) {
    const Tensor& h = tensor_arg(x.ptr(), "permute", "input");
    py::object out = result(ops::permute(h, dims));
    if (CppNode* n = maybe_record(kinds[1], x, out)) {  // ops::permute accepted them; wrapped for the inverse
      std::vector<int64_t> order = dims;
      for (int64_t& d : order) d = d < 0 ? d + h.ndim() : d;
      n->dims = std::move(order);
    }
    return out;
  });
  m.def("autograd_expand", [](py::handle x, const Shape& shape) {
    const Tensor& h = tensor_arg(x.ptr(), "expand", "input");
    py::object out = result(ops::expand(h, shape));
    if (CppNode* n = maybe_record(kinds[2], x, out)) n->input_shape = h.shape();
    return out;
  });
  // lucid/_ops/shape.py, at import: the Functions whose recorded formulas serve create_graph.
  m.def("_register_shape", [](py::object reshape, py::object permute, py::object expand) {
    kinds[0].function = reshape.release().ptr();
    kinds[1].function = permute.release().ptr();
    kinds[2].function = expand.release().ptr();
  });
}

}  // namespace lucid::autograd
