// The conv family (ops/conv.h, ops/conv_geometry.h): conv2d and its backward, and the
// one validation of every float convolution's geometry.
#include "bindings/common.h"
#include "ops/conv.h"
#include "ops/conv_geometry.h"

namespace lucid::bindings {

void init_conv(py::module_& m) {
  m.def("conv2d", &ops::conv2d, py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"),
        py::arg("padding"), py::arg("dilation"), py::arg("groups"), py::arg("fn") = "conv2d");
  m.def("conv2d_backward", &ops::conv2d_backward);
  m.def("conv_geometry", [](const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias, int64_t nd,
                            bool transposed, const std::vector<int64_t>& stride,
                            const std::optional<std::vector<int64_t>>& padding, const std::string& padding_mode,
                            const std::vector<int64_t>& output_padding, const std::vector<int64_t>& dilation,
                            int64_t groups, const std::string& fn) {
    ops::ConvGeometry g = ops::conv_geometry(x, weight, bias, nd, transposed, stride, padding, padding_mode,
                                             output_padding, dilation, groups, fn);
    return py::make_tuple(g.unbatched, g.pad_low, g.pad_high, g.out_sizes, g.out_channels);
  });
}

}  // namespace lucid::bindings
