// fake_quantize recorded in C++; see quantize.h.
#include "autograd/quantize.h"

#include <pybind11/stl.h>

#include <optional>
#include <utility>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "ops/quantize.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// saved: (mask).
InputGrads fake_quantize_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::fake_quantize_backward(g, n.saved_handles[0]);
  return r;
}

NodeKind fake_quantize_kind = {"FakeQuantizeBackward", "fake_quantize", nullptr, fake_quantize_backward};

// y as a tensor object; with a node over x (the mask saved) when x requires grad and grad mode is on.
py::object recorded(py::handle x, std::pair<Tensor, Tensor> y_mask) {
  py::object y = steal(wrap(std::move(y_mask.first)));
  if (tensor_object(x.ptr())->requires_grad && grad_enabled()) {
    py::object mask = steal(wrap(std::move(y_mask.second)));
    PyObject* input = x.ptr();
    PyObject* saved = mask.ptr();
    record_node(fake_quantize_kind, &input, 1, &saved, 1, y.ptr());
  }
  return y;
}

}  // namespace

void init_quantize(py::module_& m) {
  m.def("autograd_fake_quantize", [](py::handle x, const Tensor& scale, const Tensor& zero_point, int64_t quant_min,
                                     int64_t quant_max, std::optional<int64_t> ch_axis, int64_t group_size,
                                     int64_t axis) {
    ops::QAxes axes;
    axes.ch_axis = ch_axis;
    axes.group_size = group_size;
    axes.axis = axis;
    const Tensor& h = tensor_arg(x.ptr(), "fake_quantize", "x");
    return recorded(x, ops::fake_quantize(h, scale, zero_point, quant_min, quant_max, axes));
  });
  m.def("autograd_fake_quantize_scalar", [](py::handle x, double scale, int64_t zero_point, int64_t quant_min,
                                            int64_t quant_max) {
    const Tensor& h = tensor_arg(x.ptr(), "fake_quantize", "x");
    return recorded(x, ops::fake_quantize(h, scale, zero_point, quant_min, quant_max));
  });
}

void register_quantize(py::object fake_quantize) { fake_quantize_kind.function = fake_quantize.release().ptr(); }

}  // namespace lucid::autograd
