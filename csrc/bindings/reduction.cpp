#include "bindings/common.h"
#include "ops/reduction.h"

namespace lucid::bindings {

namespace {
std::optional<DType> opt_dtype(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  return dtype_arg(*name);
}
}  // namespace

void init_reduction(py::module_& m) {
  using ops::Dims;
  m.def("sum", [](const Tensor& x, const Dims& d, bool k, const std::optional<std::string>& dt) {
    return ops::sum(x, d, k, opt_dtype(dt));
  });
  m.def("prod", [](const Tensor& x, const Dims& d, bool k, const std::optional<std::string>& dt) {
    return ops::prod(x, d, k, opt_dtype(dt));
  });
  m.def("mean", &ops::mean);
  m.def("var", &ops::var);
  m.def("amax", &ops::amax);
  m.def("amin", &ops::amin);
  m.def("aminmax", &ops::aminmax);
  m.def("all", &ops::all);
  m.def("any", &ops::any);
  m.def("argmax", &ops::argmax);
  m.def("argmin", &ops::argmin);
  m.def("max_dim", &ops::max_dim);
  m.def("min_dim", &ops::min_dim);
  m.def("broadcast_reduced", &ops::broadcast_reduced);
  m.def("equal_mask", &ops::equal_mask);
  m.def("prod_of_others", &ops::prod_of_others);
  m.def("scatter_along", &ops::scatter_along);
}

}  // namespace lucid::bindings
