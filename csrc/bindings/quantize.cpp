// The quantize family, lucid.quantization's primitives (ops/quantize.h). Scalars arrive
// from Python already as 0-d tensors; grids cross as names ("qint8"). The
// *_scalar forms take a per-tensor scale and zero point as Python numbers
// (ops:: reads them as the 0-d float32 / int64 tensors that
// lucid.quantization.primitives._param would make), one call for the common case.
#include "bindings/common.h"
#include "ops/quantize.h"

namespace lucid::bindings {

namespace {

ops::QAxes axes_arg(std::optional<int64_t> ch_axis, int64_t group_size, int64_t axis) {
  ops::QAxes a;
  a.ch_axis = ch_axis;
  a.group_size = group_size;
  a.axis = axis;
  return a;
}

}  // namespace

void init_quantize(py::module_& m) {
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
  m.def("quantize_float", [](const Tensor& x, const Tensor& scale, const Tensor& zp, const std::string& qdtype,
                             std::optional<int64_t> ch_axis, int64_t group_size, int64_t axis, bool saturate) {
    return ops::quantize_float(x, scale, zp, qdtype, axes_arg(ch_axis, group_size, axis), saturate);
  });
  m.def("dequantize_float", [](const Tensor& q, const Tensor& scale, const Tensor& zp, const std::string& qdtype,
                               std::optional<int64_t> ch_axis, int64_t group_size, int64_t axis,
                               const std::string& dtype) {
    return ops::dequantize_float(q, scale, zp, qdtype, axes_arg(ch_axis, group_size, axis), dtype_arg(dtype));
  });
  m.def("fake_quantize_float", [](const Tensor& x, const Tensor& scale, const Tensor& zp, const std::string& qdtype,
                                  std::optional<int64_t> ch_axis, int64_t group_size, int64_t axis, bool saturate) {
    return ops::fake_quantize_float(x, scale, zp, qdtype, axes_arg(ch_axis, group_size, axis), saturate);
  });
  m.def("fake_quantize", fake_quantize(false));
  // Scalar reference kernels of the CPU stream, for tests.
  m.def("quantize_reference", quantize(true));
  m.def("dequantize_reference", dequantize(true));
  m.def("fake_quantize_reference", fake_quantize(true));
  m.def("fake_quantize_backward", &ops::fake_quantize_backward);
}

}  // namespace lucid::bindings
