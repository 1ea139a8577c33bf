// Basic indexing recorded in C++; see basic_index.h.
#include "autograd/basic_index.h"

#include <pybind11/stl.h>

#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "ops/copy.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

struct Plan {
  std::vector<int64_t> starts, steps;
  Shape lengths, shape;
};

// The slice plan of x[idx] (see basic_index.h); false for an index this parser
// leaves to Python.
bool parse(const Tensor& x, py::handle idx, Plan& plan) {
  PyObject* one[1] = {idx.ptr()};
  PyObject** items = one;
  Py_ssize_t n = 1;
  if (PyTuple_CheckExact(idx.ptr())) {
    items = &PyTuple_GET_ITEM(idx.ptr(), 0);
    n = PyTuple_GET_SIZE(idx.ptr());
  }
  const int64_t ndim = x.ndim();
  int64_t consumed = 0, ellipses = 0;
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject* it = items[k];
    if (it == Py_Ellipsis) {
      ++ellipses;
    } else if (PySlice_Check(it) || PyLong_CheckExact(it)) {
      ++consumed;
    } else if (it != Py_None) {
      return false;
    }
  }
  if (ellipses > 1 || consumed > ndim) return false;
  std::vector<int64_t>&starts = plan.starts, &steps = plan.steps;
  Shape &lengths = plan.lengths, &shape = plan.shape;
  starts.reserve(ndim);
  steps.reserve(ndim);
  lengths.reserve(ndim);
  int64_t axis = 0;
  auto full_axis = [&]() {
    starts.push_back(0);
    steps.push_back(1);
    lengths.push_back(x.shape()[axis]);
    shape.push_back(x.shape()[axis]);
    ++axis;
  };
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject* it = items[k];
    if (it == Py_None) {
      shape.push_back(1);
    } else if (it == Py_Ellipsis) {
      for (int64_t r = ndim - consumed; r > 0; --r) full_axis();
    } else if (PyLong_CheckExact(it)) {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(it, &overflow);
      const int64_t size = x.shape()[axis];
      if (overflow || v < -size || v >= size) return false;
      starts.push_back(v < 0 ? v + size : v);
      steps.push_back(1);
      lengths.push_back(1);
      ++axis;
    } else {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(it, &start, &stop, &step) < 0) {  // a non-integer bound
        PyErr_Clear();
        return false;
      }
      if (step == 0) return false;
      const int64_t len = PySlice_AdjustIndices(x.shape()[axis], &start, &stop, step);
      starts.push_back(len ? start : 0);
      steps.push_back(step);
      lengths.push_back(len);
      shape.push_back(len);
      ++axis;
    }
  }
  while (axis < ndim) full_axis();
  return true;
}


// `_BasicIndex.backward`: zeros of the input's shape with g written where x[idx] read
// (lucid/_ops/indexing.py's _slice_scatter). The plan is the node's index_plan.
InputGrads basic_index_backward(const CppNode& n, const Tensor& g) {
  const auto& p = n.index_plan;
  Tensor out = ops::full(n.input_shape, 0.0, g.dtype(), g.device());
  ops::slice_assign(out, p[0], p[1], p[2], ops::reshape(g, p[2]));
  InputGrads r;
  r.grad[0] = out;
  return r;
}

NodeKind basic_index_kind = {"BasicIndexBackward", "basic_index", nullptr, basic_index_backward};

// `_SetItem.backward`'s first-order branch: g with zeros where the value went (x's
// gradient) and g's slices (the value's, shaped like the slices' lengths).
InputGrads setitem_backward(const CppNode& n, const Tensor& g) {
  const auto& p = n.index_plan;
  InputGrads r;
  if (needs(n, 0)) {
    Tensor gx = ops::clone(g);
    ops::slice_assign(gx, p[0], p[1], p[2], ops::full(Shape{}, 0.0, g.dtype(), g.device()));
    r.grad[0] = std::move(gx);
  }
  if (needs(n, 1)) r.grad[1] = ops::slice(g, p[0], p[1], p[2]);
  return r;
}

// `_SliceScatter.backward` (x[idx]'s backward recorded under create_graph): the
// gradient's own x[idx], as `_BasicIndex.forward` reads it.
InputGrads slice_scatter_backward(const CppNode& n, const Tensor& g) {
  const auto& p = n.index_plan;
  InputGrads r;
  r.grad[0] = ops::reshape(ops::slice(g, p[0], p[1], p[2]), p[3]);
  return r;
}

NodeKind setitem_kind = {"SetItemBackward", "setitem", nullptr, setitem_backward};
NodeKind slice_scatter_kind = {"SliceScatterBackward", "slice_scatter", nullptr, slice_scatter_backward};

using Ints = std::vector<int64_t>;

// What Function.apply records: grad mode on, an input needing a gradient, a floating result.


// x[idx] as the plan's slices reshaped to `shape`, with BasicIndexBackward when x
// requires grad and grad mode is on.
py::object sliced(py::handle x, const Tensor& h, Ints starts, Ints steps, Shape lengths, Shape shape) {
  Tensor view = ops::slice(h, starts, steps, lengths);
  py::object out = wrapped(shape == lengths ? view : ops::reshape(view, shape));
  if (tensor_object(x.ptr())->requires_grad && grad_enabled()) {
    PyObject* input = x.ptr();
    CppNode& n = record_node(basic_index_kind, &input, 1, nullptr, 0, out.ptr());
    n.input_shape = h.shape();
    n.index_plan = {std::move(starts), std::move(steps), std::move(lengths), std::move(shape)};
  }
  return out;
}

// lucid/_ops/indexing.py's _Plan, for the `plan` a create_graph pass reads. Never released.
PyObject* plan_class = nullptr;

}  // namespace

void init_basic_index(py::module_& m) {
  m.def("basic_index", [](py::handle x, py::handle idx) -> py::object {
    if (!is_tensor(x.ptr())) return py::none();
    const Tensor& h = handle_of(x.ptr());
    Plan plan;
    if (!parse(h, idx, plan)) return py::none();
    return sliced(x, h, std::move(plan.starts), std::move(plan.steps), std::move(plan.lengths),
                  std::move(plan.shape));
  }, py::arg("x"), py::arg("index"));
  // x[idx] from the Python parser's plan (lucid/_ops/indexing.py: indices `basic_index`
  // leaves to it, and the formulas under create_graph), recorded the same way.
  m.def("autograd_basic_index", [](py::handle x, Ints starts, Ints steps, Shape lengths, Shape shape) {
    const Tensor& h = tensor_arg(x.ptr(), "getitem", "input");
    return sliced(x, h, std::move(starts), std::move(steps), std::move(lengths), std::move(shape));
  });
  // `x[idx] = value` while recording (lucid/_ops/indexing.py's _write): a copy of x with
  // value (shaped like the slices' lengths) written into the plan's slices, and
  // SetItemBackward over (x, value, plan), the plan kept for the formulas.
  m.def("autograd_setitem", [](py::handle x, py::handle value, const Ints& starts, const Ints& steps,
                               const Shape& lengths, const Shape& shape) {
    const Tensor& hx = tensor_arg(x.ptr(), "setitem", "input");
    const Tensor& hv = tensor_arg(value.ptr(), "setitem", "value");
    Tensor copy = ops::clone(hx);
    ops::slice_assign(copy, starts, steps, lengths, hv);
    py::object out = py::reinterpret_steal<py::object>(wrap(std::move(copy)));
    if (!out) throw py::error_already_set();
    if (records({x.ptr(), value.ptr()}, out.ptr())) {
      PyObject* inputs[3] = {x.ptr(), value.ptr(), Py_None};
      CppNode& n = record_node(setitem_kind, inputs, 3, nullptr, 0, out.ptr());
      n.index_plan = {starts, steps, lengths, shape};
    }
    return out;
  });
  // x[idx]'s backward under create_graph (`_BasicIndex.backward`): zeros of `in_shape`
  // with g written where x[idx] read, and SliceScatterBackward over (g, in_shape, plan).
  m.def("autograd_slice_scatter", [](py::handle g, const Shape& in_shape, const Ints& starts, const Ints& steps,
                                     const Shape& lengths, const Shape& shape) {
    const Tensor& hg = tensor_arg(g.ptr(), "slice_scatter", "grad");
    Tensor out_t = ops::full(in_shape, 0.0, hg.dtype(), hg.device());
    ops::slice_assign(out_t, starts, steps, lengths, ops::reshape(hg, lengths));
    py::object out = py::reinterpret_steal<py::object>(wrap(std::move(out_t)));
    if (!out) throw py::error_already_set();
    if (records({g.ptr()}, out.ptr())) {
      PyObject* inputs[3] = {g.ptr(), Py_None, Py_None};
      CppNode& n = record_node(slice_scatter_kind, inputs, 3, nullptr, 0, out.ptr());
      n.index_plan = {starts, steps, lengths, shape};
    }
    return out;
  });
  // lucid/_ops/indexing.py, at import: `_BasicIndex` (the node's function), `_Plan`,
  // and the Functions of setitem's and the scatter's nodes.
  m.def("_register_indexing", [](py::object basic_index, py::object plan, py::object setitem,
                                 py::object slice_scatter) {
    basic_index_kind.function = basic_index.release().ptr();
    plan_class = plan.release().ptr();
    setitem_kind.function = setitem.release().ptr();
    slice_scatter_kind.function = slice_scatter.release().ptr();
  });
}

// The `plan` attribute of a BasicIndexBackward node: a new _Plan with its slices.
PyObject* index_plan_object(const CppNode& n) {
  if (!plan_class || n.index_plan.size() != 4) Py_RETURN_NONE;
  try {
    py::object plan = py::reinterpret_steal<py::object>(PyObject_CallNoArgs(plan_class));
    if (!plan) throw py::error_already_set();
    const char* names[4] = {"starts", "steps", "lengths", "shape"};
    for (int i = 0; i < 4; ++i) {
      py::list values;
      for (int64_t v : n.index_plan[static_cast<size_t>(i)]) values.append(v);
      plan.attr(names[i]) = values;
    }
    plan.attr("advanced") = py::none();
    return plan.release().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

}  // namespace lucid::autograd
