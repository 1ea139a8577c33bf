// maximum ... fmod, hypot ... fmin and their graph nodes; see elementwise.h.
#include "autograd/elementwise.h"

#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/math.h"
#include "ops/scalar.h"
#include "ops/special.h"

namespace lucid::autograd {

namespace {

// Numbers next to `like` as lucid's formulas coerce them (`mul(g, 0.5)` is a
// real, `where(mask, g, 0)` an integer: PyTorch's weak scalars, ops/scalar.h).

// `_masked(mask, g)`: g where mask holds, else 0 (not g * mask, which keeps NaN * 0).
Tensor masked(const Tensor& mask, const Tensor& g) { return ops::where(mask, g, integer(0, g)); }

// `_grad_for(g, like.shape, like.dtype)`: summed back to the input's shape, cast to its dtype.
Tensor grad_fitted(const Tensor& g, const Tensor& like) {
  Tensor r = sum_to_shape(g, like.shape());
  return r.dtype() == like.dtype() ? r : ops::astype(r, like.dtype());
}


// The first of `elementwise_kinds` (below): a kind's index is its BinaryKind.
const NodeKind* kinds_begin();

// ----- the first-order formulas: the Python Functions' backwards against ops::,
// the same operations in the same order ------------------------------------------

enum BinaryKind {
  kMaximum, kMinimum, kWhere, kClamp, kGelu, kGeluTanh, kSoftplus, kAtan2, kFloorDivide, kRemainder, kFmod,
  kHypot, kLogaddexp, kLogaddexp2, kXlogy, kCopysign, kFmax, kFmin, kBinaryCount
};

// `_MaxMin.backward`: the winner takes g, a tie sends half to each (PyTorch).
// saved: (a, b). The node broadcasts: cpp_backward fits each gradient.
InputGrads maxmin_backward(const CppNode& n, const Tensor& g) {
  const Tensor &a = n.saved_handles[0], &b = n.saved_handles[1];
  bool is_max = n.kind->op[1] == 'a';  // "maximum" / "minimum"
  Tensor a_wins = is_max ? ops::gt(a, b) : ops::lt(a, b);
  Tensor b_wins = is_max ? ops::lt(a, b) : ops::gt(a, b);
  Tensor half = ops::mul(g, real(0.5, g));
  Tensor tie = ops::eq(a, b);
  InputGrads r;
  if (needs(n, 0)) r.grad[0] = ops::where(tie, half, masked(a_wins, g));
  if (needs(n, 1)) r.grad[1] = ops::where(tie, half, masked(b_wins, g));
  return r;
}

// `_Where.backward`: g to each branch by the mask. Inputs (a, b, condition);
// saved: (condition,); the recording sets the shapes cpp_backward fits to.
InputGrads where_backward(const CppNode& n, const Tensor& g) {
  const Tensor& cond = n.saved_handles[0];
  InputGrads r;
  if (needs(n, 0)) r.grad[0] = ops::where(cond, g, integer(0, g));
  if (needs(n, 1)) r.grad[1] = ops::where(cond, integer(0, g), g);
  return r;
}

// `_Clamp.backward`: g to x where min <= x <= max, to min where it was taken
// (and min <= max), to max where it was taken. saved: (x, min, max), None for
// an absent bound; each gradient is fitted here (three inputs).
InputGrads clamp_backward(const CppNode& n, const Tensor& g) {
  const Tensor &x = n.saved_handles[0], &lo = n.saved_handles[1], &hi = n.saved_handles[2];
  bool has_lo = PyTuple_GET_ITEM(n.saved, 1) != Py_None, has_hi = PyTuple_GET_ITEM(n.saved, 2) != Py_None;
  InputGrads r;
  if (needs(n, 0)) {
    std::optional<Tensor> inside;
    if (has_lo) inside = ops::ge(x, lo);
    if (has_hi) inside = inside ? ops::logical_and(*inside, ops::le(x, hi)) : ops::le(x, hi);
    r.grad[0] = grad_fitted(masked(*inside, g), x);
  }
  if (has_lo && needs(n, 1)) {
    Tensor took_lo = has_hi ? ops::logical_and(ops::lt(x, lo), ops::le(lo, hi)) : ops::lt(x, lo);
    r.grad[1] = grad_fitted(masked(took_lo, g), lo);
  }
  if (has_hi && needs(n, 2)) {
    Tensor above = ops::gt(has_lo ? ops::maximum(x, lo) : x, hi);
    r.grad[2] = grad_fitted(masked(above, g), hi);
  }
  return r;
}

// `v op t` with v a number, as the formulas write them (`mul(0.5, t)`).
Tensor mul_n(double v, const Tensor& t) { return ops::mul(real(v, t), t); }
Tensor add_n(double v, const Tensor& t) { return ops::add(real(v, t), t); }

// `_Gelu.backward`, approximate "none": g (Phi(x) + x phi(x)). saved: (x,).
InputGrads gelu_backward(const CppNode& n, const Tensor& g) {
  const Tensor& x = n.saved_handles[0];
  const double pi = 3.14159265358979323846;
  Tensor cdf = mul_n(0.5, add_n(1.0, ops::erf(ops::mul(x, real(1.0 / std::sqrt(2.0), x)))));
  Tensor pdf = mul_n(1.0 / std::sqrt(2.0 * pi), ops::exp(mul_n(-0.5, ops::mul(x, x))));
  InputGrads r;
  r.grad[0] = ops::mul(g, ops::add(cdf, ops::mul(x, pdf)));
  return r;
}

// `_Gelu.backward`, approximate "tanh": y = 0.5 x (1 + t), t = tanh(k (x + c x^3)).
InputGrads gelu_tanh_backward(const CppNode& n, const Tensor& g) {
  const Tensor& x = n.saved_handles[0];
  const double k = std::sqrt(2.0 / 3.14159265358979323846), c = 0.044715;
  Tensor x2 = ops::mul(x, x);
  Tensor t = ops::tanh(mul_n(k, ops::add(x, mul_n(c, ops::mul(x2, x)))));
  Tensor du = mul_n(k, add_n(1.0, mul_n(3.0 * c, x2)));
  Tensor tt = ops::mul(t, t);
  Tensor one_minus_tt = ops::sub(real(1.0, tt), tt);
  Tensor d = ops::add(mul_n(0.5, add_n(1.0, t)), ops::mul(mul_n(0.5, x), ops::mul(one_minus_tt, du)));
  InputGrads r;
  r.grad[0] = ops::mul(g, d);
  return r;
}

// `_Softplus.backward`: g where beta x > threshold (the result is x there),
// else g sigmoid(beta x). saved: (x, beta x); scalars: (beta, threshold).
InputGrads softplus_backward(const CppNode& n, const Tensor& g) {
  const Tensor& z = n.saved_handles[1];
  InputGrads r;
  r.grad[0] = ops::where(ops::gt(z, real(n.scalars[1], z)), g, ops::mul(g, ops::sigmoid(z)));
  return r;
}

// `_Atan2.backward`: d/dy = x / r^2, d/dx = -y / r^2, summed back to each
// input's shape (the walk casts). saved: (y, x).
InputGrads atan2_backward(const CppNode& n, const Tensor& g) {
  const Tensor &y = n.saved_handles[0], &x = n.saved_handles[1];
  Tensor r2 = ops::add(ops::mul(x, x), ops::mul(y, y));
  InputGrads r;
  if (needs(n, 0)) r.grad[0] = sum_to_shape(ops::div(ops::mul(g, x), r2), y.shape());
  if (needs(n, 1)) r.grad[1] = sum_to_shape(ops::div(ops::mul(ops::neg(g), y), r2), x.shape());
  return r;
}

// `_FloorDivide.backward`: piecewise constant, zeros of each input's shape
// and dtype (the recording keeps them in shapes / dtypes).
InputGrads floor_divide_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  for (int i = 0; i < 2; ++i)
    if (needs(n, i)) r.grad[i] = ops::full(n.shapes[i], 0.0, n.dtypes[i], g.device());
  return r;
}

// `_Remainder.backward`: d/da = 1, d/db = -q with q the rounded quotient
// (toward -inf for remainder, toward 0 for fmod). saved: (a, b); broadcasts.
InputGrads remainder_backward(const CppNode& n, const Tensor& g) {
  const Tensor &a = n.saved_handles[0], &b = n.saved_handles[1];
  InputGrads r;
  r.pass[0] = true;
  if (needs(n, 1)) {
    Tensor q;
    if (n.kind->op[0] == 'f') {  // "fmod"
      q = ops::div(a, b);
      q = ops::where(ops::lt(q, integer(0, q)), ops::ceil(q), ops::floor(q));
    } else {
      q = ops::floor_divide(a, b);
    }
    r.grad[1] = ops::neg(ops::mul(g, q));
  }
  return r;
}

// ----- hypot ... fmin (lucid/_ops/elementwise.py's `_MathBinary`) ---------------

Tensor exp2(const Tensor& x) { return ops::math_unary(MathUnaryOp::Exp2, "exp2", x); }
Tensor xlogy(const Tensor& a, const Tensor& b) { return ops::math_binary(MathBinaryOp::Xlogy, "xlogy", a, b); }

// `_MathBinary.backward` with grad mode off, op for op (PyTorch's formulas,
// docs/numerics.md "Extra elementwise math"); saved: (a, b, y). The node
// broadcasts: cpp_backward fits each gradient to its input (`_grad_for`).
InputGrads math_binary_backward(const CppNode& n, const Tensor& g) {
  const Tensor &a = n.saved_handles[0], &b = n.saved_handles[1], &y = n.saved_handles[2];
  const BinaryKind op = static_cast<BinaryKind>(n.kind - kinds_begin());
  const bool na = needs(n, 0), nb = needs(n, 1);
  InputGrads r;
  switch (op) {
    case kHypot:
      if (na) r.grad[0] = ops::div(ops::mul(g, a), y);
      if (nb) r.grad[1] = ops::div(ops::mul(g, b), y);
      break;
    case kLogaddexp:
    case kLogaddexp2: {
      auto power = [&](const Tensor& t) { return op == kLogaddexp ? ops::exp(t) : exp2(t); };
      if (na) {
        Tensor e = power(ops::sub(b, a));
        r.grad[0] = ops::div(g, ops::add(e, real(1.0, e)));
      }
      if (nb) {
        Tensor e = power(ops::sub(a, b));
        r.grad[1] = ops::div(g, ops::add(e, real(1.0, e)));
      }
      break;
    }
    case kXlogy:  // d/da = log(b), 0 where a == 0 and b <= 0 (PyTorch); d/db = a / b
      if (na) {
        Tensor zero = ops::logical_and(ops::eq(a, integer(0, a)), ops::le(b, integer(0, b)));
        Tensor v = xlogy(g, b);
        r.grad[0] = ops::where(zero, real(0.0, v), v);
      }
      if (nb) r.grad[1] = ops::div(ops::mul(g, a), b);
      break;
    case kCopysign:  // y / a is +-1: 0 where a == 0; nothing flows to the sign source
      if (na) {
        Tensor zero = ops::eq(a, integer(0, a));
        Tensor safe = ops::where(zero, real(1.0, a), a);
        Tensor v = ops::mul(g, ops::div(y, safe));
        r.grad[0] = ops::where(zero, real(0.0, v), v);
      }
      if (nb) {
        Tensor gb = ops::mul(g, b);
        r.grad[1] = ops::full(gb.shape(), 0.0, gb.dtype(), gb.device());
      }
      break;
    default: {  // fmax / fmin: to `a` where it was chosen (ties too) or b is NaN, else to `b`
      Tensor pick_a = op == kFmax ? ops::ge(a, b) : ops::le(a, b);
      pick_a = ops::logical_or(pick_a, ops::isnan(b));
      if (na) r.grad[0] = masked(pick_a, g);
      if (nb) r.grad[1] = masked(ops::logical_not(pick_a), g);
    }
  }
  return r;
}

NodeKind elementwise_kinds[kBinaryCount] = {{"MaximumBackward", "maximum", nullptr, maxmin_backward, true},
                          {"MinimumBackward", "minimum", nullptr, maxmin_backward, true},
                          {"WhereBackward", "where", nullptr, where_backward},
                          {"ClampBackward", "clamp", nullptr, clamp_backward},
                          {"GeluBackward", "gelu", nullptr, gelu_backward},
                          {"GeluBackward", "gelu_tanh", nullptr, gelu_tanh_backward},
                          {"SoftplusBackward", "softplus", nullptr, softplus_backward},
                          {"Atan2Backward", "atan2", nullptr, atan2_backward},
                          {"FloorDivideBackward", "floor_divide", nullptr, floor_divide_backward, true},
                          {"RemainderBackward", "remainder", nullptr, remainder_backward, true},
                          {"FmodBackward", "fmod", nullptr, remainder_backward, true},
                          {"HypotBackward", "hypot", nullptr, math_binary_backward, true},
                          {"LogaddexpBackward", "logaddexp", nullptr, math_binary_backward, true},
                          {"Logaddexp2Backward", "logaddexp2", nullptr, math_binary_backward, true},
                          {"XlogyBackward", "xlogy", nullptr, math_binary_backward, true},
                          {"CopysignBackward", "copysign", nullptr, math_binary_backward, true},
                          {"FmaxBackward", "fmax", nullptr, math_binary_backward, true},
                          {"FminBackward", "fmin", nullptr, math_binary_backward, true}};

const NodeKind* kinds_begin() { return elementwise_kinds; }

// ----- recording ----------------------------------------------------------------------

// Registered by lucid/_ops/elementwise.py: `_binary_args` and `as_tensor`,
// for operands that are neither tensors nor numbers (lists, arrays) and for
// their TypeErrors. Never released.
PyObject* binary_coercion = nullptr;
PyObject* as_tensor_fn = nullptr;


Tensor binary_kernel(BinaryKind op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case kMaximum: return ops::maximum(a, b);
    case kMinimum: return ops::minimum(a, b);
    case kAtan2: return ops::atan2(a, b);
    case kFloorDivide: return ops::floor_divide(a, b);
    case kRemainder: return ops::remainder(a, b);
    case kFmod: return ops::fmod(a, b);
    case kHypot: return ops::math_binary(MathBinaryOp::Hypot, "hypot", a, b);
    case kLogaddexp: return ops::math_binary(MathBinaryOp::LogAddExp, "logaddexp", a, b);
    case kLogaddexp2: return ops::math_binary(MathBinaryOp::LogAddExp2, "logaddexp2", a, b);
    case kXlogy: return xlogy(a, b);
    case kCopysign: return ops::math_binary(MathBinaryOp::Copysign, "copysign", a, b);
    case kFmax: return ops::math_binary(MathBinaryOp::Fmax, "fmax", a, b);
    case kFmin: return ops::math_binary(MathBinaryOp::Fmin, "fmin", a, b);
    default: throw RuntimeError("autograd binary: not a two-input op");
  }
}

// `op(x, y)` for the two-input ops, coercing a number next to a tensor as
// `_binary_args` does (and anything else through it).
py::object binary(BinaryKind op, PyObject* x, PyObject* y) {
  bool tx = is_tensor(x), ty = is_tensor(y);
  py::object number;
  if (!tx || !ty) {
    std::optional<Tensor> t;
    if (tx || ty) t = number_as_tensor(tx ? y : x, handle_of(tx ? x : y));
    if (!t) {
      if (!binary_coercion) throw TypeError("expected a tensor and a tensor or a number");
      py::tuple pair = steal(PyObject_CallFunctionObjArgs(binary_coercion, x, y, nullptr));
      if (!is_tensor(pair[0].ptr()) || !is_tensor(pair[1].ptr())) throw TypeError("coercion gave no tensors");
      return binary(op, pair[0].ptr(), pair[1].ptr());
    }
    number = steal(wrap(std::move(*t)));
    (tx ? y : x) = number.ptr();
  }
  py::object out = steal(wrap(binary_kernel(op, handle_of(x), handle_of(y))));
  if (!records({x, y}, out.ptr())) return out;
  PyObject* inputs[2] = {x, y};
  PyObject* saved[3] = {x, y, out.ptr()};  // hypot ... fmin also read the result
  int num_saved = op == kFloorDivide ? 0 : op >= kHypot ? 3 : 2;
  CppNode& n = record_node(elementwise_kinds[op], inputs, 2, saved, num_saved, out.ptr());
  if (op == kFloorDivide) {  // its zeros' shapes and dtypes, also where they fit as they are
    for (int i = 0; i < 2; ++i) {
      n.shapes[i] = handle_of(inputs[i]).shape();
      n.dtypes[i] = handle_of(inputs[i]).dtype();
    }
  }
  return out;
}

// type(o).__name__, as the Python wrappers' messages name it ("ndarray", not "numpy.ndarray").
std::string type_name(PyObject* o) {
  py::object name = steal(PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(o)), "__name__"));
  return py::str(name);
}

// tensor_arg with the wrappers' message: "fn(): argument 'x' must be a tensor, got T".
const Tensor& tensor_in(PyObject* o, const char* fn, const char* argument) {
  if (!is_tensor(o))
    throw TypeError(std::string(fn) + "(): argument '" + argument + "' must be a tensor, got " + type_name(o));
  return handle_of(o);
}

py::object where(PyObject* cond, PyObject* a, PyObject* b) {
  const Tensor& c = tensor_in(cond, "where", "condition");
  const Tensor& ha = tensor_in(a, "where", "input");
  const Tensor& hb = tensor_in(b, "where", "other");
  py::object out = steal(wrap(ops::where(c, ha, hb)));
  if (!records({a, b, cond}, out.ptr())) return out;
  PyObject* inputs[3] = {a, b, cond};
  CppNode& n = record_node(elementwise_kinds[kWhere], inputs, 3, &cond, 1, out.ptr());
  // The branches' gradients fit as they are when both have the result's shape
  // and one dtype (`ctx.meta` None); else cpp_backward fits them to these.
  const Shape& s = handle_of(out.ptr()).shape();
  n.same_meta = ha.dtype() == hb.dtype() && ha.shape() == s && hb.shape() == s;
  if (!n.same_meta) {
    n.shapes[0] = ha.shape();
    n.shapes[1] = hb.shape();
    n.dtypes[0] = ha.dtype();
    n.dtypes[1] = hb.dtype();
  }
  return out;
}


// A clamp bound as a tensor object (None stays None): numbers become weak
// scalars next to x, anything else goes through `as_tensor` (lists; its TypeError).
py::object bound(PyObject* v, PyObject* x, const char* argument) {
  if (v == Py_None || is_tensor(v)) return py::reinterpret_borrow<py::object>(v);
  std::optional<Tensor> t = number_as_tensor(v, handle_of(x));
  if (t) return steal(wrap(std::move(*t)));
  if (!as_tensor_fn) throw TypeError(std::string("argument '") + argument + "' must be a tensor or a number");
  py::object r = steal(PyObject_CallFunction(as_tensor_fn, "OOs", v, x, argument));
  if (!is_tensor(r.ptr())) throw TypeError("as_tensor gave no tensor");
  return r;
}

py::object clamp(PyObject* x, PyObject* min, PyObject* max) {
  tensor_in(x, "clamp", "input");
  if (min == Py_None && max == Py_None) throw ValueError("clamp(): at least one of 'min' and 'max' must be given");
  py::object lo = bound(min, x, "min"), hi = bound(max, x, "max");
  Tensor y = handle_of(x);
  std::optional<Tensor> fused;
  if (!lo.is_none() && !hi.is_none()) fused = ops::clamp_fused(y, handle_of(lo.ptr()), handle_of(hi.ptr()));
  if (fused) {
    y = std::move(*fused);
  } else {
    if (!lo.is_none()) y = ops::maximum(y, handle_of(lo.ptr()));
    if (!hi.is_none()) y = ops::minimum(y, handle_of(hi.ptr()));
  }
  py::object out = steal(wrap(std::move(y)));
  if (!records({x, lo.ptr(), hi.ptr()}, out.ptr())) return out;
  PyObject* inputs[3] = {x, lo.ptr(), hi.ptr()};
  record_node(elementwise_kinds[kClamp], inputs, 3, inputs, 3, out.ptr());
  return out;
}

py::object gelu(PyObject* x, PyObject* approximate) {
  const Tensor& h = tensor_in(x, "gelu", "input");
  if (!PyUnicode_Check(approximate))
    throw TypeError("gelu(): argument 'approximate' must be a str, got " + type_name(approximate));
  std::string mode = py::str(approximate);
  py::object out = steal(wrap(ops::gelu(h, mode)));  // checks the mode
  if (records({x}, out.ptr())) record_node(elementwise_kinds[mode == "tanh" ? kGeluTanh : kGelu], &x, 1, &x, 1, out.ptr());
  return out;
}

// lucid.nn.functional.softplus on a floating x with checked numbers:
// `_softplus_value`'s ops, relu(z) + log1p(exp(-|z|)) over beta, and x where
// z = beta x passes the threshold.
py::object softplus(PyObject* x, PyObject* beta_arg, PyObject* threshold_arg) {
  const Tensor& h = tensor_in(x, "softplus", "input");
  double beta = PyFloat_AsDouble(beta_arg), threshold = PyFloat_AsDouble(threshold_arg);
  if (PyErr_Occurred()) throw py::error_already_set();
  py::object z = steal(wrap(ops::mul(h, real(beta, h))));
  const Tensor& zh = handle_of(z.ptr());
  Tensor sum = ops::add(ops::relu(zh), ops::log1p(ops::exp(ops::neg(ops::abs(zh)))));
  Tensor soft = ops::div(sum, real(beta, sum));
  py::object out = steal(wrap(ops::where(ops::gt(zh, real(threshold, zh)), h, soft)));
  if (records({x}, out.ptr())) {
    PyObject* saved[2] = {x, z.ptr()};
    CppNode& n = record_node(elementwise_kinds[kSoftplus], &x, 1, saved, 2, out.ptr());
    n.scalars[0] = beta;
    n.scalars[1] = threshold;
  }
  return out;
}

// The METH_FASTCALL entries: argument count, then the op; Python errors for
// the C++ exceptions.
template <class F>
PyObject* guarded(F&& body) {
  try {
    return body().release().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

bool count_is(Py_ssize_t nargs, Py_ssize_t want, const char* signature) {
  if (nargs == want) return true;
  PyErr_Format(PyExc_TypeError, "%s: expected %zd arguments, got %zd", signature, want, nargs);
  return false;
}

template <BinaryKind op>
PyObject* binary_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!count_is(nargs, 2, "(input, other)")) return nullptr;
  return guarded([&] { return binary(op, args[0], args[1]); });
}

PyObject* where_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!count_is(nargs, 3, "where(condition, input, other)")) return nullptr;
  return guarded([&] { return where(args[0], args[1], args[2]); });
}

PyObject* clamp_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!count_is(nargs, 3, "clamp(input, min, max)")) return nullptr;
  return guarded([&] { return clamp(args[0], args[1], args[2]); });
}

PyObject* gelu_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!count_is(nargs, 2, "gelu(input, approximate)")) return nullptr;
  return guarded([&] { return gelu(args[0], args[1]); });
}

PyObject* softplus_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!count_is(nargs, 3, "softplus(input, beta, threshold)")) return nullptr;
  return guarded([&] { return softplus(args[0], args[1], args[2]); });
}

template <class F>
PyMethodDef entry(const char* name, F f, const char* doc) {
  return {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f)), METH_FASTCALL, doc};
}

PyMethodDef entries[] = {
    entry("autograd_maximum", binary_entry<kMaximum>, "maximum(input, other), recorded when needed (csrc/autograd/elementwise.h)."),
    entry("autograd_minimum", binary_entry<kMinimum>, "minimum(input, other), recorded when needed."),
    entry("autograd_atan2", binary_entry<kAtan2>, "atan2(input, other), recorded when needed."),
    entry("autograd_floor_divide", binary_entry<kFloorDivide>, "floor_divide(input, other), recorded when needed."),
    entry("autograd_remainder", binary_entry<kRemainder>, "remainder(input, other), recorded when needed."),
    entry("autograd_fmod", binary_entry<kFmod>, "fmod(input, other), recorded when needed."),
    entry("autograd_hypot", binary_entry<kHypot>, "hypot(input, other), recorded when needed."),
    entry("autograd_logaddexp", binary_entry<kLogaddexp>, "logaddexp(input, other), recorded when needed."),
    entry("autograd_logaddexp2", binary_entry<kLogaddexp2>, "logaddexp2(input, other), recorded when needed."),
    entry("autograd_xlogy", binary_entry<kXlogy>, "xlogy(input, other), recorded when needed."),
    entry("autograd_copysign", binary_entry<kCopysign>, "copysign(input, other), recorded when needed."),
    entry("autograd_fmax", binary_entry<kFmax>, "fmax(input, other), recorded when needed."),
    entry("autograd_fmin", binary_entry<kFmin>, "fmin(input, other), recorded when needed."),
    entry("autograd_where", where_entry, "where(condition, input, other) on tensors, recorded when needed."),
    entry("autograd_clamp", clamp_entry, "clamp(input, min, max), recorded when needed."),
    entry("autograd_gelu", gelu_entry, "gelu(input, approximate), recorded when needed."),
    entry("autograd_softplus", softplus_entry, "softplus(input, beta, threshold), recorded when needed."),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void init_elementwise_autograd(py::module_& m) {
  for (PyMethodDef* d = entries; d->ml_name; ++d) {
    PyObject* f = PyCFunction_NewEx(d, nullptr, m.attr("__name__").ptr());
    if (!f) throw py::error_already_set();
    m.attr(d->ml_name) = py::reinterpret_steal<py::object>(f);
  }
  // lucid/_ops/elementwise.py (and special.py for atan2), at import: the
  // coercions of other operands and, by op name ("maximum", "gelu", ...), the
  // Functions whose recorded formulas serve create_graph.
  m.def("_register_elementwise_coercion", [](py::object binary_args, py::object as_tensor) {
    binary_coercion = binary_args.release().ptr();
    as_tensor_fn = as_tensor.release().ptr();
  });
  m.def("_register_elementwise", [](const std::string& op, py::object function) {
    bool found = false;
    for (NodeKind& k : elementwise_kinds) {
      std::string name = k.op;
      if (name == op || (op == "gelu" && name == "gelu_tanh")) {
        k.function = function.inc_ref().ptr();
        found = true;
      }
    }
    if (!found) throw ValueError("_register_elementwise: no op named '" + op + "'");
  });
}

}  // namespace lucid::autograd
