// In-place ops and the multi-tensor optimizer steps (ops/inplace.h).
#include "bindings/common.h"
#include "ops/inplace.h"

namespace lucid::bindings {

void init_inplace(py::module_& m) {
  m.def("add_", &ops::add_);
  m.def("sub_", &ops::sub_);
  m.def("mul_", &ops::mul_);
  m.def("div_", &ops::div_);
  m.def("unary_", &ops::unary_);
  m.def("addcmul_", &ops::addcmul_);
  m.def("addcdiv_", &ops::addcdiv_);
  m.def("lerp_", &ops::lerp_);
  m.def("sgd_step_", &ops::sgd_step_);
  m.def("adam_step_", &ops::adam_step_);
  m.def("rmsprop_step_", &ops::rmsprop_step_);
}

}  // namespace lucid::bindings
