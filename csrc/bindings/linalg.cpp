#include "bindings/common.h"
#include "ops/linalg.h"

namespace lucid::bindings {

void init_linalg(py::module_& m) {
  m.def("matmul", &ops::matmul);
  m.def("mm", &ops::mm);
  m.def("bmm", &ops::bmm);
}

}  // namespace lucid::bindings
