// The int4_linear family (ops/int4_linear.h): int4 weight-only linear and its
// scalar reference.
#include "bindings/common.h"
#include "ops/int4_linear.h"

namespace lucid::bindings {

void init_int4_linear(py::module_& m) {
  auto int4_linear = [](bool reference) {
    return [reference](const Tensor& x, const Tensor& w_packed, const Tensor& scale,
                       const std::optional<Tensor>& zero_point, int64_t group_size, const std::string& qdtype,
                       const std::optional<Tensor>& bias, const std::string& act_dtype) {
      return ops::int4_weight_only_linear(x, w_packed, scale, optional_tensor(zero_point), group_size, qdtype,
                                          optional_tensor(bias), reference, act_dtype);
    };
  };
  m.def("int4_weight_only_linear", int4_linear(false), py::arg("x"), py::arg("w_packed"), py::arg("scale"),
        py::arg("zero_point"), py::arg("group_size"), py::arg("qdtype"), py::arg("bias"), py::arg("act_dtype") = "");
  m.def("int4_weight_only_linear_reference", int4_linear(true), py::arg("x"), py::arg("w_packed"), py::arg("scale"),
        py::arg("zero_point"), py::arg("group_size"), py::arg("qdtype"), py::arg("bias"), py::arg("act_dtype") = "");
}

}  // namespace lucid::bindings
