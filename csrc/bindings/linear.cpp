// The linear family (ops/linear.h): y = x @ weight^T + bias and its gradients.
#include "bindings/common.h"
#include "ops/linear.h"

namespace lucid::bindings {

void init_linear(py::module_& m) {
  m.def("linear", &ops::linear);
  m.def("linear_backward", &ops::linear_backward);
}

}  // namespace lucid::bindings
