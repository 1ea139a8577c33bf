// fake_quantize_learnable recorded in C++; see fake_quantize_learnable.h.
#include "autograd/fake_quantize_learnable.h"

#include <pybind11/stl.h>

#include <optional>
#include <utility>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "ops/fake_quantize_learnable.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

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

NodeKind learnable_kind = {"FakeQuantizeLearnableBackward", "fake_quantize_learnable", nullptr, learnable_backward};

}  // namespace

void init_fake_quantize_learnable(py::module_& m) {
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
}

void register_fake_quantize_learnable(py::object learnable) { learnable_kind.function = learnable.release().ptr(); }

}  // namespace lucid::autograd
