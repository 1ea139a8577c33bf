#include "bindings/common.h"
#include "ops/sort.h"

namespace lucid::bindings {

void init_sort(py::module_& m) { m.def("sort", &ops::sort); }

}  // namespace lucid::bindings
