// The qconv2d family (ops/qconv2d.h).
#include "bindings/common.h"
#include "ops/qconv2d.h"

namespace lucid::bindings {

void init_qconv2d(py::module_& m) {
  m.def("qconv2d", [](const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq,
                      const Tensor& w_scale, const Tensor& w_zp, const std::optional<Tensor>& bias,
                      const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                      const std::vector<int64_t>& dilation, int64_t groups, const std::optional<Tensor>& out_scale,
                      const std::optional<Tensor>& out_zp, const std::string& out_qdtype) {
    return ops::qconv2d(xq, x_scale, x_zp, wq, w_scale, w_zp, optional_tensor(bias), stride, padding, dilation,
                        groups, optional_tensor(out_scale), optional_tensor(out_zp), out_qdtype);
  });
  py::class_<ops::QPackedConvWeight>(m, "QPackedConvWeight")
      .def_property_readonly("weight", [](const ops::QPackedConvWeight& p) { return p.wq; });
  m.def("qconv2d_prepack", &ops::qconv2d_prepack, py::arg("wq"), py::arg("copy") = true);
  m.def("qconv2d_packed", [](const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp,
                             const ops::QPackedConvWeight& w, const Tensor& w_scale, const Tensor& w_zp,
                             const std::optional<Tensor>& bias, const std::vector<int64_t>& stride,
                             const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                             int64_t groups, const std::optional<Tensor>& out_scale,
                             const std::optional<Tensor>& out_zp, const std::string& out_qdtype) {
    return ops::qconv2d(xq, x_scale, x_zp, w.wq, w_scale, w_zp, optional_tensor(bias), stride, padding, dilation,
                        groups, optional_tensor(out_scale), optional_tensor(out_zp), out_qdtype, w.cache.get());
  });
}

}  // namespace lucid::bindings
