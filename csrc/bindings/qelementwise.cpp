// QFunctional's fused ops on quantized codes (ops/qelementwise.h). Scales and zero
// points cross as Python numbers, grids as names ("quint8").
#include "bindings/common.h"
#include "ops/qelementwise.h"

namespace lucid::bindings {

void init_qelementwise(py::module_& m) {
  m.def("qadd", &ops::qadd, py::arg("a"), py::arg("a_scale"), py::arg("a_zero_point"), py::arg("b"),
        py::arg("b_scale"), py::arg("b_zero_point"), py::arg("scale"), py::arg("zero_point"), py::arg("qdtype"),
        py::arg("relu") = false, py::arg("reference") = false);
  m.def("qmul", &ops::qmul, py::arg("a"), py::arg("a_scale"), py::arg("a_zero_point"), py::arg("b"),
        py::arg("b_scale"), py::arg("b_zero_point"), py::arg("scale"), py::arg("zero_point"), py::arg("qdtype"),
        py::arg("reference") = false);
  m.def("qcat", &ops::qcat, py::arg("xs"), py::arg("scales"), py::arg("zero_points"), py::arg("dim"),
        py::arg("scale"), py::arg("zero_point"), py::arg("qdtype"), py::arg("reference") = false);
}

}  // namespace lucid::bindings
