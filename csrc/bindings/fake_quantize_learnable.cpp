// The fake_quantize_learnable family (ops/fake_quantize_learnable.h): LSQ / LSQ+.
#include "bindings/common.h"
#include "ops/fake_quantize_learnable.h"

namespace lucid::bindings {

void init_fake_quantize_learnable(py::module_& m) {
  m.def("fake_quantize_learnable", &ops::fake_quantize_learnable);
  m.def("fake_quantize_learnable_backward", &ops::fake_quantize_learnable_backward);
}

}  // namespace lucid::bindings
