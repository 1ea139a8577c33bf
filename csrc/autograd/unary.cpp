// The unary ops recorded in C++; see unary.h.
#include "autograd/unary.h"

#include <cmath>
#include <string>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/scalar.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// A number next to `like` as lucid's formulas coerce it (`mul(-0.5, t)`:
// PyTorch's weak scalar, ops/scalar.h).
Tensor real(double v, const Tensor& like) { return ops::scalar_tensor(v, ops::ScalarKind::Real, like); }

// The formulas of `_Unary.backward` / `_DERIVATIVE` (lucid/_ops/elementwise.py)
// against ops::, the same operations in the same order. saved: (x, y).
using Derivative = Tensor (*)(const Tensor& g, const Tensor& x, const Tensor& y);

Tensor times(const Tensor& g, const Tensor& d) { return ops::mul(g, d); }

const Derivative kGradients[] = {
    /* neg */ [](const Tensor& g, const Tensor&, const Tensor&) { return ops::neg(g); },
    /* abs */ [](const Tensor& g, const Tensor& x, const Tensor&) { return times(g, ops::sign(x)); },
    /* sign: piecewise constant, 0 wherever the gradient exists */
    [](const Tensor& g, const Tensor&, const Tensor&) { return ops::full(g.shape(), 0.0, g.dtype(), g.device()); },
    /* relu: g where x > 0, else 0 (relu'(0) = 0) */
    [](const Tensor& g, const Tensor& x, const Tensor&) {
      Tensor mask = ops::gt(x, ops::scalar_tensor(0.0, ops::ScalarKind::Integer, x));
      return ops::where(mask, g, ops::scalar_tensor(0.0, ops::ScalarKind::Integer, g));
    },
    /* exp */ [](const Tensor& g, const Tensor&, const Tensor& y) { return times(g, y); },
    /* log */ [](const Tensor& g, const Tensor& x, const Tensor&) { return times(g, ops::div(real(1.0, x), x)); },
    /* sqrt */ [](const Tensor& g, const Tensor&, const Tensor& y) { return times(g, ops::div(real(0.5, y), y)); },
    /* rsqrt */
    [](const Tensor& g, const Tensor&, const Tensor& y) {
      Tensor cube = ops::mul(y, ops::mul(y, y));
      return times(g, ops::mul(real(-0.5, cube), cube));
    },
    /* sin */ [](const Tensor& g, const Tensor& x, const Tensor&) { return times(g, ops::cos(x)); },
    /* cos */ [](const Tensor& g, const Tensor& x, const Tensor&) { return times(g, ops::neg(ops::sin(x))); },
    /* tanh */
    [](const Tensor& g, const Tensor&, const Tensor& y) {
      Tensor yy = ops::mul(y, y);
      return times(g, ops::sub(real(1.0, yy), yy));
    },
    /* sigmoid */
    [](const Tensor& g, const Tensor&, const Tensor& y) { return times(g, ops::mul(y, ops::sub(real(1.0, y), y))); },
    /* erf: 2/sqrt(pi) exp(-x^2) */
    [](const Tensor& g, const Tensor& x, const Tensor&) {
      Tensor e = ops::exp(ops::neg(ops::mul(x, x)));
      return times(g, ops::mul(real(2.0 / std::sqrt(3.14159265358979323846), e), e));
    },
    /* floor */ [](const Tensor& g, const Tensor&, const Tensor&) { return ops::full(g.shape(), 0.0, g.dtype(), g.device()); },
    /* ceil */ [](const Tensor& g, const Tensor&, const Tensor&) { return ops::full(g.shape(), 0.0, g.dtype(), g.device()); },
    /* round */ [](const Tensor& g, const Tensor&, const Tensor&) { return ops::full(g.shape(), 0.0, g.dtype(), g.device()); },
};

using Kernel = Tensor (*)(const Tensor&);
const Kernel kKernels[] = {ops::neg, ops::abs, ops::sign,  ops::relu,    ops::exp, ops::log,   ops::sqrt, ops::rsqrt,
                           ops::sin, ops::cos, ops::tanh,  ops::sigmoid, ops::erf, ops::floor, ops::ceil, ops::round};
constexpr int kCount = sizeof(kKernels) / sizeof(kKernels[0]);
static_assert(sizeof(kGradients) / sizeof(kGradients[0]) == kCount, "one gradient per kernel");

InputGrads unary_backward(const CppNode& n, const Tensor& g);

NodeKind kinds[kCount] = {
    {"NegBackward", "neg", nullptr, unary_backward},     {"AbsBackward", "abs", nullptr, unary_backward},
    {"SignBackward", "sign", nullptr, unary_backward},   {"ReluBackward", "relu", nullptr, unary_backward},
    {"ExpBackward", "exp", nullptr, unary_backward},     {"LogBackward", "log", nullptr, unary_backward},
    {"SqrtBackward", "sqrt", nullptr, unary_backward},   {"RsqrtBackward", "rsqrt", nullptr, unary_backward},
    {"SinBackward", "sin", nullptr, unary_backward},     {"CosBackward", "cos", nullptr, unary_backward},
    {"TanhBackward", "tanh", nullptr, unary_backward},   {"SigmoidBackward", "sigmoid", nullptr, unary_backward},
    {"ErfBackward", "erf", nullptr, unary_backward},     {"FloorBackward", "floor", nullptr, unary_backward},
    {"CeilBackward", "ceil", nullptr, unary_backward},   {"RoundBackward", "round", nullptr, unary_backward}};

InputGrads unary_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = kGradients[n.kind - kinds](g, n.saved_handles[0], n.saved_handles[1]);
  return r;
}

// name -> index into kinds, built once: {"neg": 0, ...}. Never released.
PyObject* index_of = nullptr;

// autograd_unary(x, name): the op `name` on tensor x, recorded when needed.
PyObject* autograd_unary(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !is_tensor(args[0])) {
    PyErr_SetString(PyExc_TypeError, "autograd_unary(x, name): expected a tensor and an op name");
    return nullptr;
  }
  PyObject* found = PyDict_GetItemWithError(index_of, args[1]);
  if (!found) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "autograd_unary: no unary op named %R", args[1]);
    return nullptr;
  }
  int i = static_cast<int>(PyLong_AsLong(found));
  try {
    PyObject* x = args[0];
    py::object y = py::reinterpret_steal<py::object>(wrap(kKernels[i](handle_of(x))));
    if (!y) throw py::error_already_set();
    if (tensor_object(x)->requires_grad && grad_enabled()) {
      PyObject* saved[2] = {x, y.ptr()};
      record_node(kinds[i], &x, 1, saved, 2, y.ptr());
    }
    return y.release().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyMethodDef autograd_unary_def = {
    "autograd_unary", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(autograd_unary)), METH_FASTCALL,
    "autograd_unary(x, name): a unary op of `_Unary` on x, recorded when x requires grad (csrc/autograd/unary.h)."};

}  // namespace

void init_unary(py::module_& m) {
  py::dict index;
  for (int i = 0; i < kCount; ++i) index[py::str(kinds[i].op)] = py::int_(i);
  index_of = index.release().ptr();
  PyObject* f = PyCFunction_NewEx(&autograd_unary_def, nullptr, m.attr("__name__").ptr());
  if (!f) throw py::error_already_set();
  m.attr("autograd_unary") = py::reinterpret_steal<py::object>(f);
  // lucid/_ops/elementwise.py, at import: `_Unary`, whose recorded formulas
  // serve create_graph for every op here.
  m.def("_register_unary", [](py::object function) {
    PyObject* fn = function.release().ptr();
    for (NodeKind& k : kinds) k.function = fn;
  });
}

}  // namespace lucid::autograd
