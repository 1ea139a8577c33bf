// softmax, log_softmax, layer_norm and train-mode batch_norm recorded in C++; see normalization.h.
#include "autograd/normalization.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "core/version.h"
#include "ops/copy.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/normalization.h"
#include "ops/reduction.h"
#include "ops/scalar.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// `_Softmax.backward`: y * (g - sum(g * y)) over the axis; saved: (y).
InputGrads softmax_backward(const CppNode& n, const Tensor& g) {
  const Tensor& y = n.saved_handles[0];
  InputGrads r;
  r.grad[0] = ops::mul(y, ops::sub(g, ops::sum(ops::mul(g, y), n.dims, true, std::nullopt)));
  return r;
}

// `_Softmax.backward` for log_softmax: g - exp(y) * sum(g) over the axis; saved: (y).
InputGrads log_softmax_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::sub(g, ops::mul(ops::exp(n.saved_handles[0]), ops::sum(g, n.dims, true, std::nullopt)));
  return r;
}

// `_LayerNorm.backward`, first order; saved: (input, xhat, rstd, weight),
// node.dims the normalized axes. gweight = sum(g * xhat), gbias = sum(g) over
// the leading axes; gx = ((gy - mean(gy)) - xhat * mean(gy * xhat)) * rstd
// with gy = g * weight.
InputGrads layer_norm_backward(const CppNode& n, const Tensor& g) {
  const Tensor &input = n.saved_handles[0], &xhat = n.saved_handles[1], &rstd = n.saved_handles[2];
  const Tensor& weight = n.saved_handles[3];
  std::vector<int64_t> lead;
  for (int64_t i = 0; i < input.ndim() - static_cast<int64_t>(n.dims->size()); ++i) lead.push_back(i);
  auto over_lead = [&](const Tensor& t) { return lead.empty() ? t : ops::sum(t, lead, false, std::nullopt); };
  InputGrads r;
  if (needs(n, 1)) r.grad[1] = over_lead(ops::mul(g, xhat));
  if (needs(n, 2)) r.grad[2] = over_lead(g);
  if (needs(n, 0)) {
    Tensor gy = weight.defined() ? ops::mul(g, weight) : g;
    Tensor a = ops::mean(gy, n.dims, true);
    Tensor b = ops::mean(ops::mul(gy, xhat), n.dims, true);
    r.grad[0] = ops::mul(ops::sub(ops::sub(gy, a), ops::mul(xhat, b)), rstd);
  }
  return r;
}

// (1, C, 1, ...): batch_norm's per-channel shape for an input of `input`'s rank.
Shape channel_shape(const Tensor& input) {
  Shape s(static_cast<size_t>(input.ndim()), 1);
  s[1] = input.shape()[1];
  return s;
}

// `_BatchNormTrain.backward` with grad mode off (lucid/nn/functional/normalization.py), op
// for op; saved: (input, xhat, rstd, weight), node.dims every axis but the
// channel's. gbias = sum(g), gweight = sum(g * xhat) per channel, and
// gx = (g - xhat * gweight / count - gbias / count) * rstd * weight.
InputGrads batch_norm_backward(const CppNode& n, const Tensor& g) {
  const Tensor &input = n.saved_handles[0], &xhat = n.saved_handles[1], &rstd = n.saved_handles[2];
  const Tensor& weight = n.saved_handles[3];
  Shape shape = channel_shape(input);
  double inv = 1.0 / static_cast<double>(input.numel() / shape[1]);
  InputGrads r;
  Tensor gb = ops::sum(g, n.dims, false, std::nullopt);
  if (!needs(n, 0) && !needs(n, 1)) {
    r.grad[2] = gb;
    return r;
  }
  Tensor gw = ops::sum(ops::mul(g, xhat), n.dims, false, std::nullopt);
  if (needs(n, 0)) {
    Tensor scale = weight.defined() ? ops::mul(rstd, ops::reshape(weight, shape)) : rstd;
    Tensor gw_c = ops::reshape(gw, shape), gb_c = ops::reshape(gb, shape);
    Tensor a = ops::mul(gw_c, ops::scalar_tensor(inv, ops::ScalarKind::Real, gw_c));
    Tensor b = ops::mul(gb_c, ops::scalar_tensor(inv, ops::ScalarKind::Real, gb_c));
    r.grad[0] = ops::mul(ops::sub(ops::sub(g, ops::mul(xhat, a)), b), scale);
  }
  if (needs(n, 1)) r.grad[1] = gw;
  if (needs(n, 2)) r.grad[2] = gb;
  return r;
}

NodeKind normalization_kinds[] = {{"SoftmaxBackward", "softmax", nullptr, softmax_backward},
                    {"LogSoftmaxBackward", "log_softmax", nullptr, log_softmax_backward},
                    {"LayerNormBackward", "layer_norm", nullptr, layer_norm_backward},
                    {"BatchNormTrainBackward", "batch_norm", nullptr, batch_norm_backward}};

py::object softmax(py::handle x, py::handle dim, bool log) {
  const char* fn = log ? "log_softmax" : "softmax";
  const Tensor& h = tensor_arg(x.ptr(), fn, "input");
  int64_t d = 0;
  if (dim.is_none())  // PyTorch's legacy implicit choice
    d = (h.ndim() == 0 || h.ndim() == 1 || h.ndim() == 3) ? 0 : 1;
  else
    d = wrap_dim(dim.ptr(), h.ndim(), fn);
  ops::Dims axis = std::vector<int64_t>{d};
  py::object out = wrapped(ops::softmax(h, d, log));
  if (tensor_object(x.ptr())->requires_grad && grad_enabled()) {
    PyObject* input = x.ptr();
    PyObject* saved = out.ptr();
    record_node(normalization_kinds[log ? 1 : 0], &input, 1, &saved, 1, out.ptr()).dims = std::move(axis);
  }
  return out;
}

// The composed form of layer_norm, op for op: mean, centre, mean of squares,
// + eps (a Python number, coerced as `var + eps` does), rsqrt, scale, then
// weight and bias. Records a node only for a float32 / float64 input with
// parameters of its dtype (the formula's assumption); lucid's layer_norm
// records any other call op by op.
py::object layer_norm(py::handle x, py::handle weight, py::handle bias, const std::vector<int64_t>& dims,
                      py::handle eps) {
  const Tensor& h = tensor_arg(x.ptr(), "layer_norm", "input");
  std::optional<Tensor> w, b;
  if (!weight.is_none()) w = tensor_arg(weight.ptr(), "layer_norm", "weight");
  if (!bias.is_none()) b = tensor_arg(bias.ptr(), "layer_norm", "bias");
  // `var + eps` coerces eps next to the variance, whose dtype is the input's (floating)
  // or float32 (ops::mean's); a number next to a 0-d tensor of that dtype is the same.
  const DType var_dtype = is_floating(h.dtype()) ? h.dtype() : DType::Float32;
  std::optional<Tensor> e = number_as_tensor(eps.ptr(), ops::full({}, 0.0, var_dtype, h.device()));
  if (!e) throw TypeError("layer_norm(): argument 'eps' must be a real number, got " +
                          std::string(_PyType_Name(Py_TYPE(eps.ptr()))));
  ops::LayerNormParts parts = ops::layer_norm(h, w, b, dims, *e);
  Tensor xhat = parts.xhat, rstd = parts.rstd;
  py::object out = wrapped(std::move(parts.y));
  if (!grad_enabled()) return out;
  bool wanted = tensor_object(x.ptr())->requires_grad || (w && tensor_object(weight.ptr())->requires_grad) ||
                (b && tensor_object(bias.ptr())->requires_grad);
  if (!wanted) return out;
  bool one_dtype = (h.dtype() == DType::Float32 || h.dtype() == DType::Float64) && (!w || w->dtype() == h.dtype()) &&
                   (!b || b->dtype() == h.dtype());
  if (!one_dtype)
    throw TypeError("layer_norm: a recorded call needs a float32 / float64 input and parameters of its dtype "
                    "(lucid.nn.functional.layer_norm records other calls op by op)");
  // xhat and rstd are saved as tensor objects (the Python formula reads them);
  // without weight and bias the output is xhat itself.
  py::object xhat_object = (w || b) ? wrapped(xhat) : out;
  py::object rstd_object = wrapped(rstd);
  PyObject* inputs[3] = {x.ptr(), weight.ptr(), bias.ptr()};
  PyObject* saved[4] = {x.ptr(), xhat_object.ptr(), rstd_object.ptr(), weight.ptr()};
  CppNode& n = record_node(normalization_kinds[2], inputs, 3, saved, 4, out.ptr());
  n.dims = dims;
  n.scalars[0] = PyFloat_AsDouble(eps.ptr());
  if (PyErr_Occurred()) throw py::error_already_set();
  return out;
}

// `t * v` for a Python number v, as Tensor.__mul__ coerces it (a weak scalar
// next to t), or a tensor v as it is; TypeError naming `argument` for anything else.
Tensor times_number(const Tensor& t, PyObject* v, const char* argument) {
  if (is_tensor(v)) return ops::mul(t, handle_of(v));
  std::optional<Tensor> s = number_as_tensor(v, t);
  if (!s)
    throw TypeError(std::string("batch_norm(): argument '") + argument + "' must be a real number, got " +
                    _PyType_Name(Py_TYPE(v)));
  return ops::mul(t, *s);
}

// `running * (1.0 - momentum) + batch * momentum`, as the Python forward this
// replaced computed the new running statistic (Python's `1.0 - momentum`: its TypeError).
Tensor moved(const Tensor& running, const Tensor& batch, PyObject* momentum) {
  py::object one = py::float_(1.0);
  PyObject* keep = PyNumber_Subtract(one.ptr(), momentum);
  if (!keep) throw py::error_already_set();
  py::object keep_object = py::reinterpret_steal<py::object>(keep);
  Tensor kept = times_number(running, keep, "momentum");
  return ops::add(kept, times_number(batch, momentum, "momentum"));
}

// Train-mode batch_norm: the ops of the Python forward this replaced, in its order (the same
// bits): the batch mean and biased variance over `dims`, the running buffers'
// new values (unbiased variance: var * count / (count - 1)), rstd, xhat, then
// weight and bias reshaped to (1, C, 1, ...). Every value is computed before
// the running buffers are written (ops::copy_, one version bump each, as
// Tensor.copy_), so a call that fails changes nothing.
py::object batch_norm(py::handle x, py::handle weight, py::handle bias, py::handle running_mean,
                      py::handle running_var, const std::vector<int64_t>& dims, int64_t count, py::handle momentum,
                      py::handle eps) {
  const Tensor& h = tensor_arg(x.ptr(), "batch_norm", "input");
  std::optional<Tensor> w, b, rm, rv;
  if (!weight.is_none()) w = tensor_arg(weight.ptr(), "batch_norm", "weight");
  if (!bias.is_none()) b = tensor_arg(bias.ptr(), "batch_norm", "bias");
  if (!running_mean.is_none()) rm = tensor_arg(running_mean.ptr(), "batch_norm", "running_mean");
  if (!running_var.is_none()) rv = tensor_arg(running_var.ptr(), "batch_norm", "running_var");
  if (h.ndim() < 2 || count < 2)  // checked by lucid.nn.functional.batch_norm, with its messages
    throw ValueError("batch_norm: expected an (N, C, *) input with more than 1 value per channel");
  const Shape per_channel{h.shape()[1]};
  const Shape shape = channel_shape(h);
  ops::Dims axes = dims;
  Tensor mean = ops::mean(h, axes, true);
  Tensor centered = ops::sub(h, mean);
  Tensor var = ops::mean(ops::mul(centered, centered), axes, true);
  std::optional<Tensor> new_mean, new_var;
  if (rm) new_mean = moved(*rm, ops::reshape(mean, per_channel), momentum.ptr());
  if (rv) {
    Tensor v = ops::reshape(var, per_channel);
    Tensor unbiased = ops::mul(v, ops::scalar_tensor(static_cast<double>(count) / static_cast<double>(count - 1),
                                                     ops::ScalarKind::Real, v));
    new_var = moved(*rv, unbiased, momentum.ptr());
  }
  Tensor var_eps;
  if (std::optional<Tensor> e = number_as_tensor(eps.ptr(), var)) {
    var_eps = ops::add(var, *e);
  } else {  // a tensor or a list: `var + eps` as Tensor.__add__ takes it (and its TypeError)
    py::object var_object = wrapped(var);
    PyObject* sum = PyNumber_Add(var_object.ptr(), eps.ptr());
    if (!sum) throw py::error_already_set();
    py::object sum_object = py::reinterpret_steal<py::object>(sum);
    if (!is_tensor(sum)) throw TypeError("batch_norm(): argument 'eps' must be a real number");
    var_eps = handle_of(sum);
  }
  Tensor rstd = ops::rsqrt(var_eps);
  Tensor xhat = ops::mul(centered, rstd);
  Tensor y = xhat;
  if (w) y = ops::mul(y, ops::reshape(*w, shape));
  if (b) y = ops::add(y, ops::reshape(*b, shape));
  py::object out = wrapped(std::move(y));
  bool wanted = grad_enabled() && (tensor_object(x.ptr())->requires_grad ||
                                   (w && tensor_object(weight.ptr())->requires_grad) ||
                                   (b && tensor_object(bias.ptr())->requires_grad));
  double eps_value = 0.0;
  py::object xhat_object, rstd_object;
  if (wanted) {  // everything the node needs, before anything is written
    eps_value = PyFloat_AsDouble(eps.ptr());
    if (PyErr_Occurred()) throw py::error_already_set();
    xhat_object = (w || b) ? wrapped(xhat) : out;  // without weight and bias the output is xhat itself
    rstd_object = wrapped(rstd);
  }
  if (new_mean) {
    ops::copy_(*rm, *new_mean);
    set_tensor_version(*rm, tensor_version(*rm) + 1);
  }
  if (new_var) {
    ops::copy_(*rv, *new_var);
    set_tensor_version(*rv, tensor_version(*rv) + 1);
  }
  if (!wanted) return out;
  PyObject* inputs[3] = {x.ptr(), weight.ptr(), bias.ptr()};
  PyObject* saved[4] = {x.ptr(), xhat_object.ptr(), rstd_object.ptr(), weight.ptr()};
  CppNode& n = record_node(normalization_kinds[3], inputs, 3, saved, 4, out.ptr());
  n.dims = dims;
  n.scalars[0] = eps_value;
  return out;
}

}  // namespace

void init_normalization(py::module_& m) {
  m.def("autograd_softmax", &softmax);
  m.def("autograd_layer_norm", &layer_norm);
  // At import: lucid/nn/functional/activation.py's `_Softmax` and lucid/nn/functional/normalization.py's
  // `_LayerNorm`, whose recorded formulas serve create_graph.
  m.def("_register_softmax", [](py::object softmax) {
    PyObject* f = softmax.release().ptr();
    normalization_kinds[0].function = normalization_kinds[1].function = f;
  });
  m.def("_register_layer_norm", [](py::object layer_norm) { normalization_kinds[2].function = layer_norm.release().ptr(); });
  m.def("autograd_batch_norm", &batch_norm);
  // lucid/nn/functional/normalization.py's `_BatchNormTrain`: the formula under create_graph.
  m.def("_register_batch_norm", [](py::object batch_norm) { normalization_kinds[3].function = batch_norm.release().ptr(); });
}

}  // namespace lucid::autograd
