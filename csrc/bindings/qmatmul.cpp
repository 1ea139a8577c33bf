// The qmatmul family (ops/qmatmul.h), its prepacked weights, and the int8 GEMM
// engine of the CPU stream that lucid.backends.quantized selects.
#include "bindings/common.h"
#include "cpu/kernels/qgemm.h"
#include "ops/qmatmul.h"

namespace lucid::bindings {

void init_qmatmul(py::module_& m) {
  m.def("qmatmul", [](const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq,
                      const Tensor& w_scale, const Tensor& w_zp, const std::optional<Tensor>& bias,
                      const std::optional<Tensor>& out_scale, const std::optional<Tensor>& out_zp,
                      const std::string& out_qdtype) {
    return ops::qmatmul(xq, x_scale, x_zp, wq, w_scale, w_zp, optional_tensor(bias), optional_tensor(out_scale),
                        optional_tensor(out_zp), out_qdtype);
  });
  py::class_<ops::QPackedWeight>(m, "QPackedWeight")
      .def_property_readonly("weight", [](const ops::QPackedWeight& p) { return p.wq; });
  m.def("qmatmul_prepack", &ops::qmatmul_prepack, py::arg("wq"), py::arg("copy") = true);
  m.def("qmatmul_packed", [](const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const ops::QPackedWeight& w,
                             const Tensor& w_scale, const Tensor& w_zp, const std::optional<Tensor>& bias,
                             const std::optional<Tensor>& out_scale, const std::optional<Tensor>& out_zp,
                             const std::string& out_qdtype) {
    return ops::qmatmul(xq, x_scale, x_zp, w.wq, w_scale, w_zp, optional_tensor(bias), optional_tensor(out_scale),
                        optional_tensor(out_zp), out_qdtype, w.cache.get());
  });
  // lucid.backends.quantized: the int8 GEMM engine of the CPU stream.
  m.def("qengine", &kernels::qgemm_engine);
  m.def("set_qengine", &kernels::set_qgemm_engine, py::arg("name"));
  m.def("qengines_available", &kernels::qgemm_available_engines);
  m.def("qengines_known", &kernels::qgemm_engine_names);
  // (family, supported, verified) per kernel family, from the one-time self-check.
  m.def("qgemm_self_check", [] {
    std::vector<std::tuple<std::string, bool, bool>> v;
    for (const auto& c : kernels::qgemm_self_check()) v.emplace_back(c.family, c.supported, c.verified);
    return v;
  });
}

}  // namespace lucid::bindings
