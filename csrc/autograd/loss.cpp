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
#include "ops/normalization.h"
#include "ops/reduction.h"
#include "ops/scalar.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

constexpr int64_t kClassAxis = 1;

// 0, 1, ..., c - 1 as int64 on `device`, shaped to broadcast along axis `axis` of an ndim-D tensor.
Tensor classes_along(int64_t c, int64_t ndim, int64_t axis, Device device) {
  auto values = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) (*values)[static_cast<size_t>(i)] = i;
  Shape shape(static_cast<size_t>(ndim), 1);
  shape[static_cast<size_t>(axis)] = c;
  Strides strides(static_cast<size_t>(ndim), 0);
  strides[static_cast<size_t>(axis)] = 1;
  Tensor t = ops::from_buffer(values->data(), shape, strides, DType::Int64, values);
  return device == Device::CPU ? t : ops::to_device(t, device);
}

Tensor classes(int64_t c, int64_t ndim, Device device) { return classes_along(c, ndim, kClassAxis, device); }

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

NodeKind cross_entropy_kind = {"CrossEntropyIndexBackward", "cross_entropy", nullptr, cross_entropy_backward};

// ops::all / ops::any of a mask, read on the host.
bool host_bool(Tensor t) {
  if (t.device() != Device::CPU) t = ops::to_device(t, Device::CPU);
  return *static_cast<const bool*>(t.raw_data());
}
bool all_true(const Tensor& mask) { return host_bool(ops::all(mask, std::nullopt, false)); }
bool any_true(const Tensor& mask) { return host_bool(ops::any(mask, std::nullopt, false)); }

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
  Tensor logp = ops::softmax(x, kClassAxis, true);
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
    record_node(cross_entropy_kind, inputs, 2, saved, 3, out);
  }
  return result;
}

// ----- the general form: class weights, an ignore_index among the classes, label smoothing,
// ----- any reduction, a 1-D input ------------------------------------------------------------
// What lucid/nn/functional/loss.py's `_CrossEntropyIndex` ran, op for op (its `_nll_parts`),
// recorded as one node. Saved: (input, logp); buffers: (onehot, valid, the weight shaped to
// broadcast or none, the mean's denominator or none); params: (class axis, reduction:
// 0 none, 1 mean, 2 sum); scalars[0]: label_smoothing.

enum Reduction : int64_t { kNone = 0, kMean = 1, kSum = 2 };


// `_CrossEntropyIndex.backward`, first order: q the target distribution (one-hot, smoothed,
// weighted), s the upstream gradient per element (over the denominator for the mean; 0 where
// ignored); dlogp = -(q s) and dinput = dlogp - softmax * sum_c dlogp.
InputGrads general_backward(const CppNode& n, const Tensor& g) {
  const Tensor& logp = n.saved_handles[1];
  const Tensor &onehot = n.buffers[0], &valid = n.buffers[1], &w = n.buffers[2], &den = n.buffers[3];
  const int64_t axis = n.params[0];
  const double e = n.scalars[0];
  Tensor q = onehot;
  if (e > 0.0) q = ops::add(ops::mul(onehot, real(1.0 - e, onehot)), real(e / static_cast<double>(logp.shape()[axis]), onehot));
  if (w.defined()) q = ops::mul(q, w);
  Tensor scaled = n.params[1] == kMean ? ops::div(g, den) : g;
  Tensor s = ops::where(ops::ne(valid, integer(0, valid)), scaled, real(0.0, scaled));
  Shape s_shape = s.shape();
  s_shape.insert(s_shape.begin() + axis, 1);
  Tensor dlogp = ops::neg(ops::mul(q, ops::reshape(s, s_shape)));
  InputGrads r;
  r.grad[0] = ops::sub(dlogp, ops::mul(ops::exp(logp), ops::sum(dlogp, std::vector<int64_t>{axis}, true, std::nullopt)));
  return r;
}

NodeKind general_kind = {"CrossEntropyIndexBackward", "cross_entropy", nullptr, general_backward};

py::object cross_entropy_general(py::handle input, py::handle target, py::handle weight, int64_t ignore_index,
                                 const std::string& reduction, double label_smoothing) {
  const char* fn = "cross_entropy";
  const Tensor& x = tensor_arg(input.ptr(), fn, "input");
  const Tensor& t = tensor_arg(target.ptr(), fn, "target");
  std::optional<Tensor> weights;
  if (!weight.is_none()) weights = tensor_arg(weight.ptr(), fn, "weight");
  const int64_t code = reduction == "none" ? kNone : reduction == "mean" ? kMean : reduction == "sum" ? kSum : -1;
  if (code < 0 || x.ndim() < 1 || !is_floating(x.dtype()) || is_floating(t.dtype()))
    throw ValueError("autograd_cross_entropy_general: expected floating logits, integer targets and a reduction "
                     "(lucid.nn.functional.cross_entropy checks them)");
  if (t.device() != x.device())
    throw ValueError(std::string(fn) + "(): argument 'target' is on '" + device_name(t.device()) + "', the input on '" +
                     device_name(x.device()) + "'; move one with .to()");
  const int64_t axis = x.ndim() == 1 ? 0 : 1, c = x.shape()[static_cast<size_t>(axis)];
  if (x.ndim() == 1 && t.ndim() != 0)
    throw ValueError(std::string(fn) + "(): expected a 0-d target for a 1-D input of shape " + shape_str(x.shape()) +
                     ", got target shape " + shape_str(t.shape()));
  Shape want = x.shape();
  want.erase(want.begin() + axis);
  if (t.shape() != want)
    throw ValueError(std::string(fn) + "(): expected target of shape " + shape_str(want) + " for input of shape " +
                     shape_str(x.shape()) + ", got " + shape_str(t.shape()));
  Shape bshape(static_cast<size_t>(x.ndim()), 1);
  bshape[static_cast<size_t>(axis)] = c;
  if (weights && weights->shape() != Shape{c})
    throw ValueError(std::string(fn) + "(): expected weight of shape (" + std::to_string(c) + ",), got " +
                     shape_str(weights->shape()));
  // log_softmax over the class axis (not empty here)
  ops::Dims axes = std::vector<int64_t>{axis};
  Tensor logp = ops::softmax(x, axis, true);
  // _nll_parts
  Tensor valid_mask = ops::ne(t, integer(static_cast<double>(ignore_index), t));
  Tensor valid = ops::astype(valid_mask, logp.dtype());
  Shape tshape = t.shape();
  tshape.insert(tshape.begin() + axis, 1);
  Tensor onehot = ops::astype(ops::eq(ops::reshape(t, tshape), classes_along(c, x.ndim(), axis, t.device())), logp.dtype());
  {  // a target outside [0, C) must be the ignored one
    Tensor bad = ops::logical_and(valid_mask, ops::logical_or(ops::lt(t, integer(0, t)),
                                                              ops::ge(t, integer(static_cast<double>(c), t))));
    if (any_true(bad))
      throw IndexError(std::string(fn) + "(): target values must lie in [0, " + std::to_string(c) +
                       ") or equal ignore_index=" + std::to_string(ignore_index));
  }
  Tensor w = weights ? ops::reshape(*weights, bshape) : Tensor();
  Tensor picked = w.defined() ? ops::mul(onehot, w) : onehot;
  Tensor elem_w = ops::mul(ops::sum(picked, axes, false, std::nullopt), valid);
  Tensor target_logp = ops::where(ops::ne(onehot, integer(0, onehot)), logp, real(0.0, logp));
  if (w.defined()) target_logp = ops::mul(target_logp, w);
  Tensor neg_sum = ops::neg(ops::sum(target_logp, axes, false, std::nullopt));
  Tensor loss = ops::where(valid_mask, neg_sum, real(0.0, neg_sum));
  if (label_smoothing > 0.0) {
    Tensor all_neg = ops::neg(ops::sum(w.defined() ? ops::mul(logp, w) : logp, axes, false, std::nullopt));
    Tensor smooth = ops::where(valid_mask, all_neg, real(0.0, all_neg));
    loss = ops::add(ops::mul(loss, real(1.0 - label_smoothing, loss)),
                    ops::mul(smooth, real(label_smoothing / static_cast<double>(c), smooth)));
  }
  Tensor den, out;
  if (code == kMean) {
    den = ops::sum(elem_w, std::nullopt, false, std::nullopt);
    out = ops::div(ops::sum(loss, std::nullopt, false, std::nullopt), den);
  } else {
    out = code == kSum ? ops::sum(loss, std::nullopt, false, std::nullopt) : loss;
  }
  py::object result = py::reinterpret_steal<py::object>(wrap(std::move(out)));
  if (!result) throw py::error_already_set();
  if (tensor_object(input.ptr())->requires_grad && grad_enabled()) {
    py::object logp_object = py::reinterpret_steal<py::object>(wrap(std::move(logp)));
    if (!logp_object) throw py::error_already_set();
    PyObject* in = input.ptr();
    PyObject* saved[2] = {input.ptr(), logp_object.ptr()};
    CppNode& n = record_node(general_kind, &in, 1, saved, 2, result.ptr());
    n.buffers = {std::move(onehot), std::move(valid), std::move(w), std::move(den)};
    n.params = {axis, code};
    n.scalars[0] = label_smoothing;
  }
  return result;
}

}  // namespace

void init_loss(py::module_& m) {
  m.def("autograd_cross_entropy", &cross_entropy);
  m.def("autograd_cross_entropy_general", &cross_entropy_general);
  // lucid/nn/functional/loss.py, at import: `_CrossEntropyTargets`, whose recorded formula serves create_graph.
  m.def("_register_loss", [](py::object targets, py::object general) {
    cross_entropy_kind.function = targets.release().ptr();
    general_kind.function = general.release().ptr();
  });
}

}  // namespace lucid::autograd
