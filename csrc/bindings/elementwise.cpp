#include "bindings/common.h"
#include "ops/elementwise.h"

namespace lucid::bindings {

void init_elementwise(py::module_& m) {
  m.def("neg", &ops::neg);
  m.def("exp", &ops::exp);
  m.def("add", &ops::add);
  m.def("sub", &ops::sub);
  m.def("mul", &ops::mul);
  m.def("div", &ops::div);
}

}  // namespace lucid::bindings
