#include "bindings/common.h"

namespace lucid::bindings {

void init_reduction(py::module_& m) { (void)m; }

}  // namespace lucid::bindings
