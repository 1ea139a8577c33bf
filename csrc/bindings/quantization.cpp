#include "bindings/common.h"

namespace lucid::bindings {

void init_quantization(py::module_& m) { (void)m; }

}  // namespace lucid::bindings
