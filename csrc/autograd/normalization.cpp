// softmax, log_softmax and layer_norm recorded in C++; see normalization.h.
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
#include "ops/elementwise.h"
#include "ops/reduction.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

py::object result(Tensor t) {
  PyObject* o = wrap(std::move(t));
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(o);
}

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
  auto needs = [&](int i) { return PyTuple_GET_ITEM(n.needs, i) == Py_True; };
  InputGrads r;
  if (needs(1)) r.grad[1] = over_lead(ops::mul(g, xhat));
  if (needs(2)) r.grad[2] = over_lead(g);
  if (needs(0)) {
    Tensor gy = weight.defined() ? ops::mul(g, weight) : g;
    Tensor a = ops::mean(gy, n.dims, true);
    Tensor b = ops::mean(ops::mul(gy, xhat), n.dims, true);
    r.grad[0] = ops::mul(ops::sub(ops::sub(gy, a), ops::mul(xhat, b)), rstd);
  }
  return r;
}

NodeKind kinds[] = {{"SoftmaxBackward", "softmax", nullptr, softmax_backward},
                    {"LogSoftmaxBackward", "log_softmax", nullptr, log_softmax_backward},
                    {"LayerNormBackward", "layer_norm", nullptr, layer_norm_backward}};

py::object softmax(py::handle x, py::handle dim, bool log) {
  const char* fn = log ? "log_softmax" : "softmax";
  const Tensor& h = tensor_arg(x.ptr(), fn, "input");
  int64_t d = 0;
  if (dim.is_none())  // PyTorch's legacy implicit choice
    d = (h.ndim() == 0 || h.ndim() == 1 || h.ndim() == 3) ? 0 : 1;
  else
    d = wrap_dim(dim.ptr(), h.ndim(), fn);
  ops::Dims axis = std::vector<int64_t>{d};
  // Over an empty axis the result is empty (as in PyTorch) and there is no max to shift by.
  bool empty = h.ndim() > 0 && h.shape()[static_cast<size_t>(d)] == 0;
  Tensor shifted = empty ? h : ops::sub(h, ops::amax(h, axis, true));
  Tensor y;
  if (log) {
    y = ops::sub(shifted, ops::log(ops::sum(ops::exp(shifted), axis, true, std::nullopt)));
  } else {
    Tensor e = ops::exp(shifted);
    y = ops::div(e, ops::sum(e, axis, true, std::nullopt));
  }
  py::object out = result(std::move(y));
  if (tensor_object(x.ptr())->requires_grad && grad_enabled()) {
    PyObject* input = x.ptr();
    PyObject* saved = out.ptr();
    record_node(kinds[log ? 1 : 0], &input, 1, &saved, 1, out.ptr()).dims = std::move(axis);
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
  ops::Dims axes = dims;
  Tensor centered = ops::sub(h, ops::mean(h, axes, true));
  Tensor var = ops::mean(ops::mul(centered, centered), axes, true);
  std::optional<Tensor> e = number_as_tensor(eps.ptr(), var);
  if (!e) throw TypeError("layer_norm(): argument 'eps' must be a real number, got " +
                          std::string(_PyType_Name(Py_TYPE(eps.ptr()))));
  Tensor rstd = ops::rsqrt(ops::add(var, *e));
  Tensor xhat = ops::mul(centered, rstd);
  Tensor y = xhat;
  if (w) y = ops::mul(y, *w);
  if (b) y = ops::add(y, *b);
  py::object out = result(std::move(y));
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
  py::object xhat_object = (w || b) ? result(xhat) : out;
  py::object rstd_object = result(rstd);
  PyObject* inputs[3] = {x.ptr(), weight.ptr(), bias.ptr()};
  PyObject* saved[4] = {x.ptr(), xhat_object.ptr(), rstd_object.ptr(), weight.ptr()};
  CppNode& n = record_node(kinds[2], inputs, 3, saved, 4, out.ptr());
  n.dims = dims;
  n.scalars[0] = PyFloat_AsDouble(eps.ptr());
  if (PyErr_Occurred()) throw py::error_already_set();
  return out;
}

}  // namespace

void init_normalization(py::module_& m) {
  m.def("autograd_softmax", &softmax);
  m.def("autograd_layer_norm", &layer_norm);
  // At import: lucid/nn/functional.py's `_Softmax` and lucid/nn/_f_normalization.py's
  // `_LayerNorm`, whose recorded formulas serve create_graph.
  m.def("_register_softmax", [](py::object softmax) {
    PyObject* f = softmax.release().ptr();
    kinds[0].function = kinds[1].function = f;
  });
  m.def("_register_layer_norm", [](py::object layer_norm) { kinds[2].function = layer_norm.release().ptr(); });
}

}  // namespace lucid::autograd
