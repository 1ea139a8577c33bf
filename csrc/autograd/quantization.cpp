// fake_quantize recorded in C++; see quantization.h.
#include "autograd/quantization.h"

#include <pybind11/stl.h>

#include <optional>
#include <utility>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "ops/fake_quantize_learnable.h"
#include "ops/quantization.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// saved: (mask).
InputGrads fake_quantize_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::fake_quantize_backward(g, n.saved_handles[0]);
  return r;
}

// saved: (x, scale, zero_point); params (quant_min, quant_max, has ch_axis,
// ch_axis), scalars[0] grad_factor. The fused kernel of every gradient.
InputGrads learnable_backward(const CppNode& n, const Tensor& g) {
  std::optional<int64_t> ch;
  if (n.params[2]) ch = n.params[3];
  auto [dx, ds, dz] = ops::fake_quantize_learnable_backward(g, n.saved_handles[0], n.saved_handles[1],
                                                             n.saved_handles[2], n.params[0], n.params[1], ch,
                                                             n.scalars[0]);
  InputGrads r;
  r.grad[0] = std::move(dx);
  r.grad[1] = std::move(ds);
  r.grad[2] = std::move(dz);
  return r;
}

NodeKind kind = {"FakeQuantizeBackward", "fake_quantize", nullptr, fake_quantize_backward};
NodeKind learnable_kind = {"FakeQuantizeLearnableBackward", "fake_quantize_learnable", nullptr, learnable_backward};

// y as a tensor object; with a node over x (the mask saved) when x requires grad and grad mode is on.
py::object recorded(py::handle x, std::pair<Tensor, Tensor> y_mask) {
  py::object y = steal(wrap(std::move(y_mask.first)));
  if (tensor_object(x.ptr())->requires_grad && grad_enabled()) {
    py::object mask = steal(wrap(std::move(y_mask.second)));
    PyObject* input = x.ptr();
    PyObject* saved = mask.ptr();
    record_node(kind, &input, 1, &saved, 1, y.ptr());
  }
  return y;
}

}  // namespace

void init_quantization(py::module_& m) {
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
  // fake_quantize_learnable(x, scale, zero_point, ...): checked by the caller (lucid.quantization).
  m.def("autograd_fake_quantize_learnable", [](py::handle x, py::handle scale, py::handle zero_point,
                                               int64_t quant_min, int64_t quant_max, std::optional<int64_t> ch_axis,
                                               double grad_factor) {
    const char* fn = "fake_quantize_learnable";
    const Tensor& hx = tensor_arg(x.ptr(), fn, "x");
    const Tensor& hs = tensor_arg(scale.ptr(), fn, "scale");
    const Tensor& hz = tensor_arg(zero_point.ptr(), fn, "zero_point");
    py::object y = steal(wrap(ops::fake_quantize_learnable(hx, hs, hz, quant_min, quant_max, ch_axis)));
    PyObject* inputs[3] = {x.ptr(), scale.ptr(), zero_point.ptr()};
    bool wanted = false;
    for (PyObject* t : inputs) wanted = wanted || tensor_object(t)->requires_grad;
    if (wanted && grad_enabled()) {
      CppNode& n = record_node(learnable_kind, inputs, 3, inputs, 3, y.ptr());
      n.params = {quant_min, quant_max, ch_axis ? 1 : 0, ch_axis.value_or(0)};
      n.scalars[0] = grad_factor;
    }
    return y;
  });
  // lucid/quantization/primitives.py, at import: `_FakeQuantize` and `_FakeQuantizeLearnable`,
  // whose Python formulas serve create_graph (the learnable one refuses it: once_differentiable).
  m.def("_register_fake_quantize", [](py::object f, py::object learnable) {
    kind.function = f.release().ptr();
    learnable_kind.function = learnable.release().ptr();
  });
}

}  // namespace lucid::autograd
