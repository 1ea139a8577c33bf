#include "bindings/common.h"
#include "ops/shape.h"

namespace lucid::bindings {

void init_shape(py::module_& m) {
  m.def("reshape", &ops::reshape, py::arg("x"), py::arg("shape"));
  m.def("view", &ops::view, py::arg("x"), py::arg("shape"));
  m.def("permute", &ops::permute, py::arg("x"), py::arg("dims"));
  m.def("expand", &ops::expand, py::arg("x"), py::arg("shape"));
  m.def("slice", &ops::slice, py::arg("x"), py::arg("starts"), py::arg("steps"), py::arg("lengths"));
  m.def("slice_assign", &ops::slice_assign, py::arg("x"), py::arg("starts"), py::arg("steps"), py::arg("lengths"),
        py::arg("value"));
  m.def("cat", &ops::cat, py::arg("tensors"), py::arg("axis"));
}

}  // namespace lucid::bindings
