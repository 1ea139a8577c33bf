#include "bindings/common.h"
#include "ops/special.h"

namespace lucid::bindings {

void init_special(py::module_& m) {
  m.def("log1p", &ops::log1p);
  m.def("expm1", &ops::expm1);
  m.def("log2", &ops::log2);
  m.def("atan2", &ops::atan2);
}

}  // namespace lucid::bindings
