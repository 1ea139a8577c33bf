// cross_entropy's common case recorded in C++; see loss.h.
#include "autograd/loss.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/device.h"
#include "core/errors.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/indexing.h"
#include "ops/reduction.h"
#include "ops/scalar.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

constexpr int64_t kClassAxis = 1;

// 0, 1, ..., c - 1 as int64 on `device`, shaped to broadcast along the class axis of an ndim-D tensor.
Tensor classes(int64_t c, int64_t ndim, Device device) {
  auto values = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) (*values)[static_cast<size_t>(i)] = i;
  Shape shape(static_cast<size_t>(ndim), 1);
  shape[kClassAxis] = c;
  Strides strides(static_cast<size_t>(ndim), 0);
  strides[kClassAxis] = 1;
  Tensor t = ops::from_buffer(values->data(), shape, strides, DType::Int64, values);
  return device == Device::CPU ? t : ops::to_device(t, device);
}

// `_CrossEntropyTargets.backward`, first order: with p = exp(logp) and the
// one-hot of the targets, dlogp = -(onehot * (g / n)) and
// dinput = dlogp - p * sum_c dlogp. Saved: (input, logp, target).
InputGrads cross_entropy_backward(const CppNode& n, const Tensor& g) {
  const Tensor &logp = n.saved_handles[1], &target = n.saved_handles[2];
  Shape tshape = target.shape();
  tshape.insert(tshape.begin() + kClassAxis, 1);
  Tensor hot = ops::astype(ops::eq(ops::reshape(target, tshape), classes(logp.shape()[kClassAxis], logp.ndim(),
                                                                         target.device())),
                           logp.dtype());
  Tensor count = ops::full({}, static_cast<double>(target.numel()), logp.dtype(), logp.device());
  Tensor dlogp = ops::neg(ops::mul(hot, ops::div(g, count)));
  InputGrads r;
  r.grad[0] = ops::sub(dlogp, ops::mul(ops::exp(logp), ops::sum(dlogp, std::vector<int64_t>{kClassAxis}, true,
                                                                std::nullopt)));
  return r;
}

NodeKind kind = {"CrossEntropyIndexBackward", "cross_entropy", nullptr, cross_entropy_backward};

bool all_true(const Tensor& mask) {
  Tensor t = ops::all(mask, std::nullopt, false);
  if (t.device() != Device::CPU) t = ops::to_device(t, Device::CPU);
  return *static_cast<const bool*>(t.raw_data());
}

py::object cross_entropy(py::handle input, py::handle target) {
  const char* fn = "cross_entropy";
  const Tensor& x = tensor_arg(input.ptr(), fn, "input");
  const Tensor& t = tensor_arg(target.ptr(), fn, "target");
  if (x.ndim() < 2 || !is_floating(x.dtype()) || is_floating(t.dtype()) || x.shape()[kClassAxis] == 0)
    throw ValueError("autograd_cross_entropy: expected floating logits of shape (N, C, *) with C > 0 and "
                     "integer targets (lucid.nn.functional.cross_entropy takes every other case)");
  if (t.device() != x.device())
    throw ValueError(std::string(fn) + "(): argument 'target' is on '" + device_name(t.device()) + "', the input on '" +
                     device_name(x.device()) + "'; move one with .to()");
  Shape want = x.shape();
  want.erase(want.begin() + kClassAxis);
  if (t.shape() != want)
    throw ValueError(std::string(fn) + "(): expected target of shape " + shape_str(want) + " for input of shape " +
                     shape_str(x.shape()) + ", got " + shape_str(t.shape()));
  const int64_t c = x.shape()[kClassAxis], count = t.numel();
  // The gathered form needs every target a class, and counts them exactly in float32.
  if (count == 0 || count >= (int64_t{1} << 24)) return py::none();
  Tensor in_range = ops::logical_and(ops::ge(t, ops::scalar_tensor(0.0, ops::ScalarKind::Integer, t)),
                                     ops::lt(t, ops::scalar_tensor(static_cast<double>(c), ops::ScalarKind::Integer, t)));
  if (!all_true(in_range)) return py::none();
  ops::Dims axis = std::vector<int64_t>{kClassAxis};
  Tensor shifted = ops::sub(x, ops::amax(x, axis, true));
  Tensor logp = ops::sub(shifted, ops::log(ops::sum(ops::exp(shifted), axis, true, std::nullopt)));
  Shape tshape = t.shape();
  tshape.insert(tshape.begin() + kClassAxis, 1);
  Tensor picked = ops::reshape(ops::gather(logp, kClassAxis, ops::reshape(t, tshape)), t.shape());
  Tensor den = ops::full({}, static_cast<double>(count), logp.dtype(), logp.device());
  PyObject* out = wrap(ops::div(ops::sum(ops::neg(picked), std::nullopt, false, std::nullopt), den));
  if (!out) throw py::error_already_set();
  py::object result = py::reinterpret_steal<py::object>(out);
  if (tensor_object(input.ptr())->requires_grad && grad_enabled()) {
    py::object logp_object = py::reinterpret_steal<py::object>(wrap(std::move(logp)));
    if (!logp_object) throw py::error_already_set();
    PyObject* inputs[2] = {input.ptr(), target.ptr()};
    PyObject* saved[3] = {input.ptr(), logp_object.ptr(), target.ptr()};
    record_node(kind, inputs, 2, saved, 3, out);
  }
  return result;
}

}  // namespace

void init_loss(py::module_& m) {
  m.def("autograd_cross_entropy", &cross_entropy);
  // lucid/nn/functional.py, at import: `_CrossEntropyTargets`, whose recorded formula serves create_graph.
  m.def("_register_loss", [](py::object f) { kind.function = f.release().ptr(); });
}

}  // namespace lucid::autograd
