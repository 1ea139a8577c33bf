// The group-wise affine and MX / NVFP4 block (MLX layout) weight formats (csrc/ops/group_quant.h).
#include "bindings/common.h"
#include "ops/group_quant.h"

namespace lucid::bindings {

void init_group_quant(py::module_& m) {
  m.def("group_quantize", [](const Tensor& w, int64_t group_size, int64_t bits) {
    auto r = ops::group_quantize(w, group_size, bits);
    return py::make_tuple(r[0], r[1], r[2]);
  }, py::arg("w"), py::arg("group_size"), py::arg("bits"));
  m.def("group_dequantize", &ops::group_dequantize, py::arg("words"), py::arg("scales"), py::arg("biases"),
        py::arg("group_size"), py::arg("bits"));
  m.def("block_quantize", [](const Tensor& w, const std::string& mode) {
    auto r = ops::block_quantize(w, mode);
    return py::make_tuple(r[0], r[1]);
  }, py::arg("w"), py::arg("mode"));
  m.def("block_dequantize", &ops::block_dequantize, py::arg("words"), py::arg("scales"), py::arg("mode"));
  m.def("group_quantized_linear",
        [](const Tensor& x, const Tensor& words, const Tensor& scales, const Tensor& biases, int64_t group_size,
           int64_t bits, const std::optional<Tensor>& bias) {
          return ops::group_quantized_linear(x, words, scales, biases, group_size, bits, bias ? *bias : Tensor());
        },
        py::arg("x"), py::arg("words"), py::arg("scales"), py::arg("biases"), py::arg("group_size"), py::arg("bits"),
        py::arg("bias") = py::none());
}

}  // namespace lucid::bindings
