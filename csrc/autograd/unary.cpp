// The unary ops recorded in C++; see unary.h.
#include "autograd/unary.h"

#include <string>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/special.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/math.h"
#include "ops/scalar.h"
#include "ops/special.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// A number next to `like` as lucid's formulas coerce it (`mul(-0.5, t)`,
// `sub(1.0, t)`: a Python float is a Real weak scalar, an int an Integer one,
// ops/scalar.h, as lucid/_ops/common.py's as_tensor and the C++ operators).

// The constants of lucid/_ops/trig.py, floating.py and special.py, as Python computes
// them (math.log(2.0) ...), spelled exactly so the scalars match bit for bit.
constexpr double kLn2 = 0x1.62e42fefa39efp-1;             // math.log(2.0)
constexpr double kLn10 = 0x1.26bb1bbb55516p+1;            // math.log(10.0)
constexpr double kTwoOverSqrtPi = 0x1.20dd750429b6dp+0;   // 2.0 / math.sqrt(math.pi)
constexpr double kSqrtPiOverTwo = 0x1.c5bf891b4ef6ap-1;   // math.sqrt(math.pi) / 2.0

// The kernels of lucid/_ops/trig.py's, floating.py's and special.py's unary ops (_C.tan ...): the name
// is the one its error messages give.
template <MathUnaryOp op>
Tensor math(const Tensor& x);
#define LUCID_MATH_UNARY(Op, name) \
  template <>                      \
  Tensor math<MathUnaryOp::Op>(const Tensor& x) { return ops::math_unary(MathUnaryOp::Op, name, x); }
LUCID_MATH_UNARY(Tan, "tan")
LUCID_MATH_UNARY(Sinh, "sinh")
LUCID_MATH_UNARY(Cosh, "cosh")
LUCID_MATH_UNARY(Asin, "asin")
LUCID_MATH_UNARY(Acos, "acos")
LUCID_MATH_UNARY(Atan, "atan")
LUCID_MATH_UNARY(Asinh, "asinh")
LUCID_MATH_UNARY(Acosh, "acosh")
LUCID_MATH_UNARY(Atanh, "atanh")
LUCID_MATH_UNARY(Trunc, "trunc")
LUCID_MATH_UNARY(Frac, "frac")
LUCID_MATH_UNARY(Log10, "log10")
LUCID_MATH_UNARY(Exp2, "exp2")
LUCID_MATH_UNARY(Erfc, "erfc")
LUCID_MATH_UNARY(Erfinv, "erfinv")
LUCID_MATH_UNARY(Lgamma, "lgamma")
LUCID_MATH_UNARY(Digamma, "digamma")
LUCID_MATH_UNARY(Sinc, "sinc")
#undef LUCID_MATH_UNARY
using U = MathUnaryOp;

// The formulas of `_Unary.backward` with `_DERIVATIVE` / `_GRADIENT`
// (lucid/_ops/elementwise.py, trig.py, floating.py, special.py) against ops::, the
// same operations in the same order. saved: (x, y).
using Derivative = Tensor (*)(const Tensor& g, const Tensor& x, const Tensor& y);

Tensor times(const Tensor& g, const Tensor& d) { return ops::mul(g, d); }
Tensor zeros(const Tensor& g) { return ops::full(g.shape(), 0.0, g.dtype(), g.device()); }

const Derivative kGradients[] = {
    /* neg */ [](const Tensor& g, const Tensor&, const Tensor&) { return ops::neg(g); },
    /* abs */ [](const Tensor& g, const Tensor& x, const Tensor&) { return times(g, ops::sign(x)); },
    /* sign: piecewise constant, 0 wherever the gradient exists */
    [](const Tensor& g, const Tensor&, const Tensor&) { return zeros(g); },
    /* relu: g where x > 0, else 0 (relu'(0) = 0) */
    [](const Tensor& g, const Tensor& x, const Tensor&) {
      Tensor mask = ops::gt(x, integer(0.0, x));
      return ops::where(mask, g, integer(0.0, g));
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
      return times(g, ops::mul(real(kTwoOverSqrtPi, e), e));
    },
    /* floor */ [](const Tensor& g, const Tensor&, const Tensor&) { return zeros(g); },
    /* ceil */ [](const Tensor& g, const Tensor&, const Tensor&) { return zeros(g); },
    /* round */ [](const Tensor& g, const Tensor&, const Tensor&) { return zeros(g); },
    // ----- lucid/_ops/elementwise.py: _DERIVATIVE (g * d(x, y)) -----
    /* tan: y^2 + 1 */
    [](const Tensor& g, const Tensor&, const Tensor& y) {
      Tensor yy = ops::mul(y, y);
      return times(g, ops::add(yy, real(1.0, yy)));
    },
    /* sinh */ [](const Tensor& g, const Tensor& x, const Tensor&) { return times(g, math<U::Cosh>(x)); },
    /* cosh */ [](const Tensor& g, const Tensor& x, const Tensor&) { return times(g, math<U::Sinh>(x)); },
    /* trunc: piecewise constant */ [](const Tensor& g, const Tensor&, const Tensor&) { return zeros(g); },
    /* exp2: y ln 2 */ [](const Tensor& g, const Tensor&, const Tensor& y) { return times(g, ops::mul(y, real(kLn2, y))); },
    /* erfc: -2/sqrt(pi) exp(-x^2) */
    [](const Tensor& g, const Tensor& x, const Tensor&) {
      Tensor e = ops::exp(ops::neg(ops::mul(x, x)));
      return times(g, ops::mul(real(-kTwoOverSqrtPi, e), e));
    },
    /* erfinv: sqrt(pi)/2 exp(y^2) */
    [](const Tensor& g, const Tensor&, const Tensor& y) {
      Tensor e = ops::exp(ops::mul(y, y));
      return times(g, ops::mul(real(kSqrtPiOverTwo, e), e));
    },
    // ----- lucid/_ops/{trig,floating,special}.py: _GRADIENT (the whole input gradient) -----
    /* asin: g / sqrt(1 - x^2) */
    [](const Tensor& g, const Tensor& x, const Tensor&) {
      Tensor xx = ops::mul(x, x);
      return ops::div(g, ops::sqrt(ops::sub(real(1.0, xx), xx)));
    },
    /* acos: -(g / sqrt(1 - x^2)) */
    [](const Tensor& g, const Tensor& x, const Tensor&) {
      Tensor xx = ops::mul(x, x);
      return ops::neg(ops::div(g, ops::sqrt(ops::sub(real(1.0, xx), xx))));
    },
    /* atan: g / (x^2 + 1) */
    [](const Tensor& g, const Tensor& x, const Tensor&) {
      Tensor xx = ops::mul(x, x);
      return ops::div(g, ops::add(xx, real(1.0, xx)));
    },
    /* asinh: g / sqrt(x^2 + 1) */
    [](const Tensor& g, const Tensor& x, const Tensor&) {
      Tensor xx = ops::mul(x, x);
      return ops::div(g, ops::sqrt(ops::add(xx, real(1.0, xx))));
    },
    /* acosh: g / sqrt(x^2 - 1) */
    [](const Tensor& g, const Tensor& x, const Tensor&) {
      Tensor xx = ops::mul(x, x);
      return ops::div(g, ops::sqrt(ops::sub(xx, real(1.0, xx))));
    },
    /* atanh: g / (1 - x^2) */
    [](const Tensor& g, const Tensor& x, const Tensor&) {
      Tensor xx = ops::mul(x, x);
      return ops::div(g, ops::sub(real(1.0, xx), xx));
    },
    /* frac: x - trunc(x), slope 1: g * 1.0 */
    [](const Tensor& g, const Tensor&, const Tensor&) { return ops::mul(g, real(1.0, g)); },
    /* log10: g / (x ln 10) */
    [](const Tensor& g, const Tensor& x, const Tensor&) { return ops::div(g, ops::mul(x, real(kLn10, x))); },
    /* lgamma: g digamma(x) */
    [](const Tensor& g, const Tensor& x, const Tensor&) { return ops::mul(g, math<U::Digamma>(x)); },
    /* sinc: g (cos(pi x) - y) / x, 0 at x = 0 (_sinc_grad) */
    [](const Tensor& g, const Tensor& x, const Tensor& y) {
      Tensor zero = ops::eq(x, integer(0.0, x));
      Tensor safe = ops::where(zero, real(1.0, x), x);
      Tensor d = ops::mul(g, ops::div(ops::sub(ops::cos(ops::mul(x, real(kPi, x))), y), safe));
      return ops::where(zero, real(0.0, d), d);
    },
    // ----- lucid/_ops/special.py: _GRADIENT -----
    /* log1p: g / (x + 1.0) */
    [](const Tensor& g, const Tensor& x, const Tensor&) { return ops::div(g, ops::add(x, real(1.0, x))); },
    /* expm1: g * (y + 1.0) */
    [](const Tensor& g, const Tensor&, const Tensor& y) { return ops::mul(g, ops::add(y, real(1.0, y))); },
    /* log2: g / (x ln 2) */
    [](const Tensor& g, const Tensor& x, const Tensor&) { return ops::div(g, ops::mul(x, real(kLn2, x))); },
    // ----- lucid/_ops/gamma.py: _GRADIENT -----
    /* digamma: g polygamma(1, x) (special.cpp's composition) */
    [](const Tensor& g, const Tensor& x, const Tensor&) { return ops::mul(g, polygamma(1, x)); },
};

using Kernel = Tensor (*)(const Tensor&);
const Kernel kKernels[] = {
    ops::neg,        ops::abs,        ops::sign,         ops::relu,       ops::exp,          ops::log,
    ops::sqrt,       ops::rsqrt,      ops::sin,          ops::cos,        ops::tanh,         ops::sigmoid,
    ops::erf,        ops::floor,      ops::ceil,         ops::round,      math<U::Tan>,      math<U::Sinh>,
    math<U::Cosh>,   math<U::Trunc>,  math<U::Exp2>,     math<U::Erfc>,   math<U::Erfinv>,   math<U::Asin>,
    math<U::Acos>,   math<U::Atan>,   math<U::Asinh>,    math<U::Acosh>,  math<U::Atanh>,    math<U::Frac>,
    math<U::Log10>,  math<U::Lgamma>, math<U::Sinc>,     ops::log1p,      ops::expm1,        ops::log2,
    math<U::Digamma>};
constexpr int kUnaryCount = sizeof(kKernels) / sizeof(kKernels[0]);
static_assert(sizeof(kGradients) / sizeof(kGradients[0]) == kUnaryCount, "one gradient per kernel");

InputGrads unary_backward(const CppNode& n, const Tensor& g);

NodeKind unary_kinds[kUnaryCount] = {
    {"NegBackward", "neg", nullptr, unary_backward},       {"AbsBackward", "abs", nullptr, unary_backward},
    {"SignBackward", "sign", nullptr, unary_backward},     {"ReluBackward", "relu", nullptr, unary_backward},
    {"ExpBackward", "exp", nullptr, unary_backward},       {"LogBackward", "log", nullptr, unary_backward},
    {"SqrtBackward", "sqrt", nullptr, unary_backward},     {"RsqrtBackward", "rsqrt", nullptr, unary_backward},
    {"SinBackward", "sin", nullptr, unary_backward},       {"CosBackward", "cos", nullptr, unary_backward},
    {"TanhBackward", "tanh", nullptr, unary_backward},     {"SigmoidBackward", "sigmoid", nullptr, unary_backward},
    {"ErfBackward", "erf", nullptr, unary_backward},       {"FloorBackward", "floor", nullptr, unary_backward},
    {"CeilBackward", "ceil", nullptr, unary_backward},     {"RoundBackward", "round", nullptr, unary_backward},
    {"TanBackward", "tan", nullptr, unary_backward},       {"SinhBackward", "sinh", nullptr, unary_backward},
    {"CoshBackward", "cosh", nullptr, unary_backward},     {"TruncBackward", "trunc", nullptr, unary_backward},
    {"Exp2Backward", "exp2", nullptr, unary_backward},     {"ErfcBackward", "erfc", nullptr, unary_backward},
    {"ErfinvBackward", "erfinv", nullptr, unary_backward}, {"AsinBackward", "asin", nullptr, unary_backward},
    {"AcosBackward", "acos", nullptr, unary_backward},     {"AtanBackward", "atan", nullptr, unary_backward},
    {"AsinhBackward", "asinh", nullptr, unary_backward},   {"AcoshBackward", "acosh", nullptr, unary_backward},
    {"AtanhBackward", "atanh", nullptr, unary_backward},   {"FracBackward", "frac", nullptr, unary_backward},
    {"Log10Backward", "log10", nullptr, unary_backward},   {"LgammaBackward", "lgamma", nullptr, unary_backward},
    {"SincBackward", "sinc", nullptr, unary_backward},     {"Log1pBackward", "log1p", nullptr, unary_backward},
    {"Expm1Backward", "expm1", nullptr, unary_backward},   {"Log2Backward", "log2", nullptr, unary_backward},
    {"DigammaBackward", "digamma", nullptr, unary_backward}};

InputGrads unary_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = kGradients[n.kind - unary_kinds](g, n.saved_handles[0], n.saved_handles[1]);
  return r;
}

// name -> index into unary_kinds, built once: {"neg": 0, ...}. Never released.
PyObject* unary_index = nullptr;

// autograd_unary(x, name): the op `name` on tensor x, recorded when needed.
PyObject* autograd_unary(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !is_tensor(args[0])) {
    PyErr_SetString(PyExc_TypeError, "autograd_unary(x, name): expected a tensor and an op name");
    return nullptr;
  }
  PyObject* found = PyDict_GetItemWithError(unary_index, args[1]);
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
      record_node(unary_kinds[i], &x, 1, saved, 2, y.ptr());
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
  for (int i = 0; i < kUnaryCount; ++i) index[py::str(unary_kinds[i].op)] = py::int_(i);
  unary_index = index.release().ptr();
  PyObject* f = PyCFunction_NewEx(&autograd_unary_def, nullptr, m.attr("__name__").ptr());
  if (!f) throw py::error_already_set();
  m.attr("autograd_unary") = py::reinterpret_steal<py::object>(f);
  // lucid/_ops/elementwise.py, at import: `_Unary`, whose recorded formulas
  // serve create_graph for every op here.
  m.def("_register_unary", [](py::object function) {
    PyObject* fn = function.release().ptr();
    for (NodeKind& k : unary_kinds) k.function = fn;
  });
}

}  // namespace lucid::autograd
