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

// The piece of `g` along `axis` from `start`, `length` long (a view on the CPU
// stream), as lucid.split's getitem takes it.
Tensor piece(const Tensor& g, int64_t axis, int64_t start, int64_t length) {
  size_t nd = g.shape().size();
  std::vector<int64_t> starts(nd, 0), steps(nd, 1);
  Shape lengths = g.shape();
  starts[static_cast<size_t>(axis)] = start;
  lengths[static_cast<size_t>(axis)] = length;
  return ops::slice(g, starts, steps, lengths);
}

// `_Cat.backward`: the gradient split back into the joined pieces
// (node.params: their sizes along node.dims[0]). Input 0 is cat's `dim`.
InputGrads cat_backward(const CppNode& n, const Tensor& g) {
  InputGrads r(static_cast<size_t>(n.num_inputs));
  int64_t axis = (*n.dims)[0], start = 0;
  for (size_t i = 0; i < n.params.size(); ++i) {
    if (needs(n, static_cast<int>(i + 1)))
      r.grad[i + 1] = piece(g, axis, start, n.params[i]);
    start += n.params[i];
  }
  return r;
}

// `_Stack.backward`: each input's slice of the gradient, without the stacked axis.
InputGrads stack_backward(const CppNode& n, const Tensor& g) {
  InputGrads r(static_cast<size_t>(n.num_inputs));
  int64_t axis = (*n.dims)[0];
  for (int i = 1; i < n.num_inputs; ++i)
    if (needs(n, i)) r.grad[i] = ops::reshape(piece(g, axis, i - 1, 1), n.input_shape);
  return r;
}

NodeKind shape_kinds[] = {{"ReshapeBackward", "reshape", nullptr, reshape_backward},
                    {"PermuteBackward", "permute", nullptr, permute_backward},
                    {"ExpandBackward", "expand", nullptr, expand_backward},
                    {"CatBackward", "cat", nullptr, cat_backward},
                    {"StackBackward", "stack", nullptr, stack_backward}};
NodeKind& kReshape = shape_kinds[0];
NodeKind& kCat = shape_kinds[3];
NodeKind& kStack = shape_kinds[4];

// Attaches a node of `kind` to `out` when x requires grad and grad mode is on
// (x is floating point then, and so is the view); the caller fills what it reads.
CppNode* record_shape_op(NodeKind& kind, py::handle x, const py::object& out) {
  if (!tensor_object(x.ptr())->requires_grad || !grad_enabled()) return nullptr;
  PyObject* input = x.ptr();
  return &record_node(kind, &input, 1, nullptr, 0, out.ptr());
}

// A reshape of x (unsqueeze, squeeze) recorded as ReshapeBackward, as
// lucid.reshape records it.
py::object reshaped(py::handle x, const Tensor& h, const Shape& shape) {
  py::object out = wrapped(ops::reshape(h, shape));
  if (CppNode* n = record_shape_op(kReshape, x, out)) n->input_shape = h.shape();
  return out;
}

// cat's and stack's `tensors`, checked as lucid._ops.shape._tensor_list does:
// a non-empty list or tuple of tensors.
std::vector<PyObject*> tensor_list(py::handle tensors, const char* fn) {
  PyObject* seq = tensors.ptr();
  std::string f = std::string(fn) + "(): argument 'tensors' ";
  if (!PyList_Check(seq) && !PyTuple_Check(seq))
    throw TypeError(f + "must be a list or tuple of tensors, got " + _PyType_Name(Py_TYPE(seq)));
  Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
  if (count == 0) throw ValueError(f + "must be a non-empty sequence of tensors");
  std::vector<PyObject*> items(static_cast<size_t>(count));
  for (Py_ssize_t k = 0; k < count; ++k) {
    PyObject* t = PySequence_Fast_GET_ITEM(seq, k);
    if (!is_tensor(t))
      throw TypeError(f + "item " + std::to_string(k) + " must be a tensor, got " + _PyType_Name(Py_TYPE(t)));
    handle_of(t);  // ValueError for a placeholder holding no tensor
    items[static_cast<size_t>(k)] = t;
  }
  return items;
}

// Joins `items` (of `handles`) along `axis` and, when grad mode is on and one
// requires grad, records `kind` over (None for the axis argument, *items).
py::object joined(NodeKind& kind, const std::vector<PyObject*>& items, const std::vector<Tensor>& handles,
                  int64_t axis) {
  py::object out = wrapped(ops::cat(handles, axis));
  if (!grad_enabled()) return out;
  bool any = false;
  for (PyObject* t : items) any = any || tensor_object(t)->requires_grad;
  if (!any) return out;
  std::vector<PyObject*> inputs{Py_None};
  inputs.insert(inputs.end(), items.begin(), items.end());
  CppNode& n = record_node(kind, inputs.data(), static_cast<int>(inputs.size()), nullptr, 0, out.ptr());
  n.dims = std::vector<int64_t>{axis};
  for (const Tensor& h : handles) n.params.push_back(h.shape()[static_cast<size_t>(axis)]);  // as joined
  n.input_shape = tensor_object(items[0])->handle.shape();
  return out;
}

}  // namespace

void init_shape(py::module_& m) {
  m.def("autograd_reshape", [](py::handle x, const Shape& shape, bool must_view) {
    const Tensor& h = tensor_arg(x.ptr(), must_view ? "view" : "reshape", "input");
    py::object out = wrapped(must_view ? ops::view(h, shape) : ops::reshape(h, shape));
    if (CppNode* n = record_shape_op(shape_kinds[0], x, out)) n->input_shape = h.shape();
    return out;
  });
  m.def("autograd_permute", [](py::handle x, const std::vector<int64_t>& dims) {
    const Tensor& h = tensor_arg(x.ptr(), "permute", "input");
    py::object out = wrapped(ops::permute(h, dims));
    if (CppNode* n = record_shape_op(shape_kinds[1], x, out)) {  // ops::permute accepted them; wrapped for the inverse
      std::vector<int64_t> order = dims;
      for (int64_t& d : order) d = d < 0 ? d + h.ndim() : d;
      n->dims = std::move(order);
    }
    return out;
  });
  m.def("autograd_expand", [](py::handle x, const Shape& shape) {
    const Tensor& h = tensor_arg(x.ptr(), "expand", "input");
    py::object out = wrapped(ops::expand(h, shape));
    if (CppNode* n = record_shape_op(shape_kinds[2], x, out)) n->input_shape = h.shape();
    return out;
  });
  m.def("autograd_unsqueeze", [](py::handle x, py::handle dim) {
    const Tensor& h = tensor_arg(x.ptr(), "unsqueeze", "input");
    Shape shape = h.shape();
    int64_t d = wrap_dim(dim.ptr(), h.ndim() + 1, "unsqueeze");
    shape.insert(shape.begin() + d, 1);
    return reshaped(x, h, shape);
  });
  // squeeze(x, dim): dim None (every axis of size 1), an int, or a tuple / list of them;
  // a named axis whose size is not 1 stays.
  m.def("autograd_squeeze", [](py::handle x, py::handle dim) {
    const Tensor& h = tensor_arg(x.ptr(), "squeeze", "input");
    const Shape& in = h.shape();
    std::vector<char> drop(in.size(), 0);
    if (dim.is_none()) {
      for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
    } else {
      auto mark = [&](PyObject* d) {
        int64_t i = wrap_dim(d, h.ndim(), "squeeze");
        if (!in.empty() && in[static_cast<size_t>(i)] == 1) drop[static_cast<size_t>(i)] = 1;
      };
      if (PyTuple_Check(dim.ptr()) || PyList_Check(dim.ptr())) {
        for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(dim.ptr()); ++k) mark(PySequence_Fast_GET_ITEM(dim.ptr(), k));
      } else {
        mark(dim.ptr());
      }
    }
    Shape shape;
    for (size_t i = 0; i < in.size(); ++i)
      if (!drop[i]) shape.push_back(in[i]);
    return reshaped(x, h, shape);
  });
  m.def("autograd_cat", [](py::handle tensors, py::handle dim) {
    std::vector<PyObject*> items = tensor_list(tensors, "cat");
    std::vector<Tensor> handles;
    for (PyObject* t : items) handles.push_back(tensor_object(t)->handle);
    if (handles[0].ndim() == 0)
      throw ValueError("cat(): argument 'tensors' item 0 is 0-d; zero-dimensional tensors cannot be concatenated "
                       "(use stack)");
    return joined(kCat, items, handles, wrap_dim(dim.ptr(), handles[0].ndim(), "cat"));
  });
  m.def("autograd_stack", [](py::handle tensors, py::handle dim) {
    std::vector<PyObject*> items = tensor_list(tensors, "stack");
    const Shape& first = tensor_object(items[0])->handle.shape();
    int64_t d = wrap_dim(dim.ptr(), static_cast<int64_t>(first.size()) + 1, "stack");
    Shape shape = first;
    shape.insert(shape.begin() + d, 1);
    std::vector<Tensor> handles;
    for (size_t k = 0; k < items.size(); ++k) {
      const Tensor& h = tensor_object(items[k])->handle;
      if (h.shape() != first)
        throw ValueError("stack(): argument 'tensors' item " + std::to_string(k) + " has shape " + shape_str(h.shape()) +
                         ", item 0 has " + shape_str(first) + "; stack needs equal shapes");
      handles.push_back(ops::reshape(h, shape));
    }
    return joined(kStack, items, handles, d);
  });
  // lucid/_ops/shape.py, at import: the Functions whose recorded formulas serve create_graph.
  m.def("_register_shape", [](py::object reshape, py::object permute, py::object expand, py::object cat,
                              py::object stack) {
    shape_kinds[0].function = reshape.release().ptr();
    shape_kinds[1].function = permute.release().ptr();
    shape_kinds[2].function = expand.release().ptr();
    shape_kinds[3].function = cat.release().ptr();
    shape_kinds[4].function = stack.release().ptr();
  });
}

}  // namespace lucid::autograd
