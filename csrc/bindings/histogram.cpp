#include "bindings/common.h"
#include "ops/histogram.h"

namespace lucid::bindings {

void init_histogram(py::module_& m) { m.def("histc", &ops::histc); }

}  // namespace lucid::bindings
