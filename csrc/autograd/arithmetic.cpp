// add / sub / mul / div and their graph node; see arithmetic.h.
#include "autograd/arithmetic.h"

#include <optional>
#include <utility>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/elementwise.h"
#include "ops/scalar.h"

namespace lucid::autograd {

namespace {

// The formulas of lucid/_ops/elementwise.py's _Add ... _Pow, against ops::,
// the same operations in the same order.
InputGrads add_backward(const CppNode&, const Tensor&) {
  InputGrads r;
  r.pass[0] = r.pass[1] = true;
  return r;
}

InputGrads sub_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.pass[0] = true;
  if (needs(n, 1)) r.grad[1] = ops::neg(g);
  return r;
}

InputGrads mul_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;  // saved: (a if b needs a gradient, b if a does)
  if (needs(n, 0)) r.grad[0] = ops::mul(g, n.saved_handles[1]);
  if (needs(n, 1)) r.grad[1] = ops::mul(g, n.saved_handles[0]);
  return r;
}

InputGrads div_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;  // saved: (a if b needs a gradient, b)
  const Tensor &a = n.saved_handles[0], &b = n.saved_handles[1];
  if (needs(n, 0)) r.grad[0] = ops::div(g, b);
  if (needs(n, 1)) r.grad[1] = ops::neg(ops::div(ops::mul(g, a), ops::mul(b, b)));
  return r;
}

// `_Pow.backward`: b a^(b-1) for the base and a^b log a for the exponent, each
// 0 where PyTorch defines it so (b == 0; a == 0 with b >= 0). saved: (a, b, y).
InputGrads pow_backward(const CppNode& n, const Tensor& g) {
  const Tensor &a = n.saved_handles[0], &b = n.saved_handles[1], &y = n.saved_handles[2];
  auto integer = [](double v, const Tensor& like) { return ops::scalar_tensor(v, ops::ScalarKind::Integer, like); };
  auto masked = [&](const Tensor& mask, const Tensor& t) { return ops::where(mask, t, integer(0, t)); };
  InputGrads r;
  if (needs(n, 0)) {
    Tensor d = ops::mul(b, ops::pow(a, ops::sub(b, integer(1, b))));
    r.grad[0] = masked(ops::ne(b, integer(0, b)), ops::mul(g, d));
  }
  if (needs(n, 1)) {
    Tensor d = ops::mul(y, ops::log(a));
    Tensor keep = ops::logical_not(ops::logical_and(ops::eq(a, integer(0, a)), ops::ge(b, integer(0, b))));
    r.grad[1] = masked(keep, ops::mul(g, d));
  }
  return r;
}

NodeKind arithmetic_kinds[] = {{"AddBackward", "add", nullptr, add_backward, true},
                    {"SubBackward", "sub", nullptr, sub_backward, true},
                    {"MulBackward", "mul", nullptr, mul_backward, true},
                    {"DivBackward", "div", nullptr, div_backward, true},
                    {"PowBackward", "pow", nullptr, pow_backward, true}};

// Registered by lucid/_ops/elementwise.py: the coercion of operands that are
// neither tensors nor numbers (lists, arrays). Never released.
PyObject* coerce = nullptr;

// Makes `out` the output of a new node over `a` and `b`. Each factor of mul is
// saved only when the other's gradient needs it, so an in-place write to `y`
// after `y * 2.0` is no error (as in PyTorch); div always reads b.
void record(Arith op, PyObject* a, PyObject* b, PyObject* out) {
  bool n0 = tensor_object(a)->requires_grad, n1 = tensor_object(b)->requires_grad;
  PyObject* inputs[2] = {a, b};
  if (op == Arith::Pow) {  // b a^(b-1), a^b log a: both operands and the result
    PyObject* saved[3] = {a, b, out};
    record_node(arithmetic_kinds[static_cast<int>(op)], inputs, 2, saved, 3, out);
    return;
  }
  PyObject* saved[2] = {n1 ? a : Py_None, op == Arith::Div ? b : n0 ? b : Py_None};
  int num_saved = op == Arith::Mul || op == Arith::Div ? 2 : 0;
  record_node(arithmetic_kinds[static_cast<int>(op)], inputs, 2, saved, num_saved, out);
}

Tensor kernel(Arith op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case Arith::Add: return ops::add(a, b);
    case Arith::Sub: return ops::sub(a, b);
    case Arith::Mul: return ops::mul(a, b);
    case Arith::Div: return ops::div(a, b);
    case Arith::Pow: return ops::pow(a, b);
  }
  throw RuntimeError("arith: unknown op");
}

PyObject* run(Arith op, PyObject* x, PyObject* y) {
  bool tx = is_tensor(x), ty = is_tensor(y);
  py::object number;  // a coerced Python number, as a tensor object
  if (!tx || !ty) {
    PyObject* like = tx ? x : ty ? y : nullptr;
    std::optional<Tensor> t;
    if (like) t = number_as_tensor(tx ? y : x, handle_of(like));
    if (!t) {  // lists, arrays: lucid/_ops/elementwise.py's coercion, then here again
      if (!coerce) Py_RETURN_NOTIMPLEMENTED;
      py::tuple pair = steal(PyObject_CallFunctionObjArgs(coerce, x, y, nullptr));
      if (!is_tensor(pair[0].ptr()) || !is_tensor(pair[1].ptr())) throw TypeError("arith: coercion gave no tensors");
      return run(op, pair[0].ptr(), pair[1].ptr());
    }
    number = steal(wrap(std::move(*t)));
    (tx ? y : x) = number.ptr();
  }
  const Tensor& a = handle_of(x);
  const Tensor& b = handle_of(y);
  py::object out = steal(wrap(kernel(op, a, b)));
  if ((tensor_object(x)->requires_grad || tensor_object(y)->requires_grad) && grad_enabled()) record(op, x, y, out.ptr());
  return out.release().ptr();
}

}  // namespace

PyObject* arith(Arith op, PyObject* x, PyObject* y) {
  try {
    return run(op, x, y);
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

namespace {

PyObject* nb_add(PyObject* x, PyObject* y) { return arith(Arith::Add, x, y); }
PyObject* nb_sub(PyObject* x, PyObject* y) { return arith(Arith::Sub, x, y); }
PyObject* nb_mul(PyObject* x, PyObject* y) { return arith(Arith::Mul, x, y); }
PyObject* nb_div(PyObject* x, PyObject* y) { return arith(Arith::Div, x, y); }

PyNumberMethods number_methods = [] {
  PyNumberMethods m{};
  m.nb_add = nb_add;
  m.nb_subtract = nb_sub;
  m.nb_multiply = nb_mul;
  m.nb_true_divide = nb_div;
  return m;
}();

template <Arith op>
PyObject* function_form(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "expected 2 arguments (input, other), got %zd", nargs);
    return nullptr;
  }
  PyObject* r = arith(op, args[0], args[1]);
  if (r == Py_NotImplemented) {
    Py_DECREF(r);
    PyErr_SetString(PyExc_TypeError, "expected a tensor and a tensor or a number");
    return nullptr;
  }
  return r;
}

PyMethodDef function_defs[] = {
    {"autograd_add", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function_form<Arith::Add>)),
     METH_FASTCALL, "input + other, recorded when an input requires grad (csrc/autograd/arithmetic.h)."},
    {"autograd_sub", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function_form<Arith::Sub>)),
     METH_FASTCALL, "input - other, recorded when an input requires grad."},
    {"autograd_mul", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function_form<Arith::Mul>)),
     METH_FASTCALL, "input * other, recorded when an input requires grad."},
    {"autograd_pow", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function_form<Arith::Pow>)),
     METH_FASTCALL, "input ** exponent, recorded when an operand requires grad (no integer-exponent check)."},
    {"autograd_div", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function_form<Arith::Div>)),
     METH_FASTCALL, "input / other (true division), recorded when an input requires grad."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

PyNumberMethods* arith_number_methods() { return &number_methods; }

void init_arithmetic(py::module_& m) {
  for (PyMethodDef* d = function_defs; d->ml_name; ++d) {
    PyObject* f = PyCFunction_NewEx(d, nullptr, m.attr("__name__").ptr());
    if (!f) throw py::error_already_set();
    m.attr(d->ml_name) = py::reinterpret_steal<py::object>(f);
  }
  // lucid/_ops/elementwise.py, at import: the coercion of other operands
  // (lists, arrays) and the Functions whose formulas serve create_graph.
  m.def("_register_arithmetic", [](py::object coercion, py::object add, py::object sub, py::object mul,
                                   py::object div, py::object pow) {
    coerce = coercion.release().ptr();
    PyObject* fs[5] = {add.release().ptr(), sub.release().ptr(), mul.release().ptr(), div.release().ptr(),
                       pow.release().ptr()};
    for (int i = 0; i < 5; ++i) arithmetic_kinds[i].function = fs[i];
  });
}

}  // namespace lucid::autograd
