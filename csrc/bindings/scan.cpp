#include "bindings/common.h"
#include "ops/scan.h"

namespace lucid::bindings {

void init_scan(py::module_& m) {
  m.def("cumsum", &ops::cumsum);
  m.def("cumprod", &ops::cumprod);
}

}  // namespace lucid::bindings
