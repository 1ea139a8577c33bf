// lucid.quantization primitives (csrc/ops/quantization.cpp). Scalars arrive
// from Python already as 0-d tensors; grids cross as names ("qint8"). The
// *_scalar forms take a per-tensor scale and zero point as Python numbers
// (ops:: reads them as the 0-d float32 / int64 tensors that
// lucid.quantization.primitives._param would make), one call for the common case.
#include "bindings/common.h"
#include "cpu/kernels/qgemm.h"
#include "ops/fake_quantize_learnable.h"
#include "ops/int4_linear.h"
#include "ops/quantization.h"

namespace lucid::bindings {

namespace {
ops::QAxes axes_arg(std::optional<int64_t> ch_axis, int64_t group_size, int64_t axis) {
  ops::QAxes a;
  a.ch_axis = ch_axis;
  a.group_size = group_size;
  a.axis = axis;
  return a;
}
Tensor optional_tensor(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }
}  // namespace

void init_quantization(py::module_& m) {
  auto quantize = [](bool reference) {
    return [reference](const Tensor& x, const Tensor& scale, const Tensor& zp, const std::string& qdtype,
                       std::optional<int64_t> ch_axis, int64_t group_size, int64_t axis) {
      return ops::quantize(x, scale, zp, qdtype, axes_arg(ch_axis, group_size, axis), reference);
    };
  };
  auto dequantize = [](bool reference) {
    return [reference](const Tensor& q, const Tensor& scale, const Tensor& zp, std::optional<int64_t> ch_axis,
                       int64_t group_size, int64_t axis, const std::string& dtype) {
      return ops::dequantize(q, scale, zp, axes_arg(ch_axis, group_size, axis), dtype_arg(dtype), reference);
    };
  };
  auto fake_quantize = [](bool reference) {
    return [reference](const Tensor& x, const Tensor& scale, const Tensor& zp, int64_t quant_min, int64_t quant_max,
                       std::optional<int64_t> ch_axis, int64_t group_size, int64_t axis) {
      return ops::fake_quantize(x, scale, zp, quant_min, quant_max, axes_arg(ch_axis, group_size, axis), reference);
    };
  };
  m.def("quantize", quantize(false));
  m.def("quantize_scalar", [](const Tensor& x, double scale, int64_t zp, const std::string& qdtype) {
    return ops::quantize(x, scale, zp, qdtype);
  });
  m.def("dequantize_scalar", [](const Tensor& q, double scale, int64_t zp, const std::string& dtype) {
    return ops::dequantize(q, scale, zp, dtype_arg(dtype));
  });
  m.def("fake_quantize_scalar", [](const Tensor& x, double scale, int64_t zp, int64_t quant_min, int64_t quant_max) {
    return ops::fake_quantize(x, scale, zp, quant_min, quant_max).first;
  });
  m.def("dequantize", dequantize(false));
  m.def("fake_quantize", fake_quantize(false));
  // Scalar reference kernels of the CPU stream, for tests.
  m.def("quantize_reference", quantize(true));
  m.def("dequantize_reference", dequantize(true));
  m.def("fake_quantize_reference", fake_quantize(true));
  m.def("fake_quantize_backward", &ops::fake_quantize_backward);
  m.def("fake_quantize_learnable", &ops::fake_quantize_learnable);
  m.def("fake_quantize_learnable_backward", &ops::fake_quantize_learnable_backward);
  m.def("pack_int4", &ops::pack_int4);
  m.def("unpack_int4", &ops::unpack_int4);
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
  m.def("qmatmul", [](const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq,
                      const Tensor& w_scale, const Tensor& w_zp, const std::optional<Tensor>& bias,
                      const std::optional<Tensor>& out_scale, const std::optional<Tensor>& out_zp,
                      const std::string& out_qdtype) {
    return ops::qmatmul(xq, x_scale, x_zp, wq, w_scale, w_zp, optional_tensor(bias), optional_tensor(out_scale),
                        optional_tensor(out_zp), out_qdtype);
  });
  py::class_<ops::QPackedWeight>(m, "QPackedWeight")
      .def_property_readonly("weight", [](const ops::QPackedWeight& p) { return p.wq; });
  m.def("qmatmul_prepack", &ops::qmatmul_prepack, py::arg("wq"));
  m.def("qmatmul_packed", [](const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const ops::QPackedWeight& w,
                             const Tensor& w_scale, const Tensor& w_zp, const std::optional<Tensor>& bias,
                             const std::optional<Tensor>& out_scale, const std::optional<Tensor>& out_zp,
                             const std::string& out_qdtype) {
    return ops::qmatmul(xq, x_scale, x_zp, w.wq, w_scale, w_zp, optional_tensor(bias), optional_tensor(out_scale),
                        optional_tensor(out_zp), out_qdtype, w.cache.get());
  });
  m.def("qconv2d", [](const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq,
                      const Tensor& w_scale, const Tensor& w_zp, const std::optional<Tensor>& bias,
                      const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                      const std::vector<int64_t>& dilation, int64_t groups, const std::optional<Tensor>& out_scale,
                      const std::optional<Tensor>& out_zp, const std::string& out_qdtype) {
    return ops::qconv2d(xq, x_scale, x_zp, wq, w_scale, w_zp, optional_tensor(bias), stride, padding, dilation,
                        groups, optional_tensor(out_scale), optional_tensor(out_zp), out_qdtype);
  });
  // lucid.backends.quantized: the int8 GEMM engine of the CPU stream.
  m.def("qengine", &kernels::qgemm_engine);
  m.def("set_qengine", &kernels::set_qgemm_engine, py::arg("name"));
  m.def("qengines_available", &kernels::qgemm_available_engines);
  m.def("qengines_known", &kernels::qgemm_engine_names);
}

}  // namespace lucid::bindings
