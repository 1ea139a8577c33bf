#include "bindings/common.h"
#include "ops/indexing.h"
#include "ops/shape.h"

namespace lucid::bindings {

namespace {

// x[idx] when idx is a basic index: Python ints (not bools), slices, None and
// one Ellipsis, alone or in a tuple. Parsed here in one pass into the slice
// plan that lucid._ops.indexing builds in Python (same starts, steps and
// lengths, then a reshape that drops int axes and adds None axes), so the
// result is the same view. Returns None for anything else (tensors, lists,
// numpy integers, bools) and for any index that would raise, so that the
// Python parser handles it and raises its usual message.
py::object basic_index(const Tensor& x, py::handle idx) {
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
      return py::none();
    }
  }
  if (ellipses > 1 || consumed > ndim) return py::none();
  std::vector<int64_t> starts, steps;
  Shape lengths, shape;
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
      if (overflow || v < -size || v >= size) return py::none();
      starts.push_back(v < 0 ? v + size : v);
      steps.push_back(1);
      lengths.push_back(1);
      ++axis;
    } else {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(it, &start, &stop, &step) < 0) {  // a non-integer bound
        PyErr_Clear();
        return py::none();
      }
      if (step == 0) return py::none();
      const int64_t len = PySlice_AdjustIndices(x.shape()[axis], &start, &stop, step);
      starts.push_back(len ? start : 0);
      steps.push_back(step);
      lengths.push_back(len);
      shape.push_back(len);
      ++axis;
    }
  }
  while (axis < ndim) full_axis();
  Tensor out = ops::slice(x, starts, steps, lengths);
  return py::cast(shape == lengths ? out : ops::reshape(out, shape));
}

}  // namespace

// Called from init_shape (bindings/shape.cpp): indexing is part of the shape family.
void init_indexing(py::module_& m) {
  m.def("gather", &ops::gather, py::arg("x"), py::arg("axis"), py::arg("index"));
  m.def("scatter_add", &ops::scatter_add, py::arg("self"), py::arg("axis"), py::arg("index"), py::arg("src"));
  m.def("scatter", &ops::scatter, py::arg("self"), py::arg("axis"), py::arg("index"), py::arg("src"));
  m.def("index_copy", &ops::index_copy, py::arg("self"), py::arg("axis"), py::arg("index"), py::arg("src"));
  m.def("index_select", &ops::index_select, py::arg("x"), py::arg("axis"), py::arg("index"));
  m.def("index_add", &ops::index_add, py::arg("self"), py::arg("axis"), py::arg("index"), py::arg("src"));
  m.def("basic_index", &basic_index, py::arg("x"), py::arg("index"));
  m.def("wrap_index", &ops::wrap_index, py::arg("index"), py::arg("size"), py::arg("axis"), py::arg("fn"));
}

}  // namespace lucid::bindings
