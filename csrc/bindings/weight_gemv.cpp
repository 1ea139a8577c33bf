// The weight_gemv family (ops/weight_gemv.h): the float-coded weight-only
// linears and their scalar references.
#include "bindings/common.h"
#include "ops/weight_gemv.h"

namespace lucid::bindings {

void init_weight_gemv(py::module_& m) {
  auto fp8 = [](bool reference) {
    return [reference](const Tensor& x, const Tensor& codes, const Tensor& scale, const std::string& qdtype,
                       const std::optional<Tensor>& bias) {
      return ops::float8_weight_linear(x, codes, scale, qdtype, optional_tensor(bias), reference);
    };
  };
  auto block = [](bool reference) {
    return [reference](const Tensor& x, const Tensor& words, const Tensor& scales, const std::string& mode,
                       const std::optional<Tensor>& bias) {
      return ops::block_weight_linear(x, words, scales, mode, optional_tensor(bias), reference);
    };
  };
  for (bool ref : {false, true}) {
    const std::string tail = ref ? "_reference" : "";
    m.def(("float8_weight_linear" + tail).c_str(), fp8(ref), py::arg("x"), py::arg("codes"), py::arg("scale"),
          py::arg("qdtype"), py::arg("bias") = py::none());
    m.def(("block_weight_linear" + tail).c_str(), block(ref), py::arg("x"), py::arg("words"), py::arg("scales"),
          py::arg("mode"), py::arg("bias") = py::none());
  }
}

}  // namespace lucid::bindings
