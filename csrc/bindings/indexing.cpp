#include "bindings/common.h"
#include "ops/indexing.h"
#include "ops/shape.h"

namespace lucid::bindings {

// Called from init_shape (bindings/shape.cpp): indexing is part of the shape family.
void init_indexing(py::module_& m) {
  m.def("gather", &ops::gather, py::arg("x"), py::arg("axis"), py::arg("index"));
  m.def("scatter_add", &ops::scatter_add, py::arg("self"), py::arg("axis"), py::arg("index"), py::arg("src"));
  m.def("scatter", &ops::scatter, py::arg("self"), py::arg("axis"), py::arg("index"), py::arg("src"));
  m.def("index_copy", &ops::index_copy, py::arg("self"), py::arg("axis"), py::arg("index"), py::arg("src"));
  m.def("index_select", &ops::index_select, py::arg("x"), py::arg("axis"), py::arg("index"));
  m.def("index_add", &ops::index_add, py::arg("self"), py::arg("axis"), py::arg("index"), py::arg("src"));
  m.def("wrap_index", &ops::wrap_index, py::arg("index"), py::arg("size"), py::arg("axis"), py::arg("fn"));
}

}  // namespace lucid::bindings
