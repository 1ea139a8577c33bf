// The pool family (ops/pool.h): the 2-D pools and their backwards.
#include "bindings/common.h"
#include "ops/pool.h"

namespace lucid::bindings {

void init_pool(py::module_& m) {
  m.def("max_pool2d", &ops::max_pool2d);
  m.def("max_pool2d_backward", &ops::max_pool2d_backward);
  m.def("qmax_pool2d", &ops::qmax_pool2d);
  m.def("avg_pool2d", &ops::avg_pool2d);
  m.def("avg_pool2d_backward", &ops::avg_pool2d_backward);
  m.def("adaptive_avg_pool2d", &ops::adaptive_avg_pool2d);
  m.def("adaptive_avg_pool2d_backward", &ops::adaptive_avg_pool2d_backward);
}

}  // namespace lucid::bindings
