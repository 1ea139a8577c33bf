// add / sub / mul / div and their graph node; see arithmetic.h.
#include "autograd/arithmetic.h"

#include <structmember.h>

#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "autograd/grad_mode.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "core/version.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/reduction.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace {

constexpr const char* kNames[] = {"AddBackward", "SubBackward", "MulBackward", "DivBackward"};

// Registered by lucid/_ops/elementwise.py (`_register_arithmetic`): the
// Python Function per op (a node's `function`: its recorded formula serves
// create_graph) and the coercion of operands that are neither tensors nor
// numbers. Never released: they live as long as the interpreter.
PyObject* functions[4] = {};
PyObject* coerce = nullptr;

struct ArithNode {
  PyObject_HEAD
  Arith op;
  bool released;   // backward went through without retain_graph
  bool same_meta;  // both inputs have one shape and one dtype: gradients fit as they are
  Shape shapes[2];
  DType dtypes[2];
  PyObject* inputs;  // (a or None, b or None): the inputs that need a gradient
  PyObject* edges;   // per input: (its grad_fn, its output number) or None
  PyObject* needs;   // needs_input_grad: (bool, bool)
  PyObject* saved;   // mul / div: the operands the formula reads, as saved; () otherwise
  // Each saved operand's engine tensor and its memory's version when saved:
  // saved_tensors raises when either moved (an in-place op wrote or rebound it).
  Tensor saved_handles[2];
  int64_t saved_versions[2];
  PyObject* weakrefs;
};

PyTypeObject ArithNodeType = {PyVarObject_HEAD_INIT(nullptr, 0)};

ArithNode* node_of(PyObject* o) { return reinterpret_cast<ArithNode*>(o); }

py::object steal(PyObject* p) {
  if (!p) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(p);
}

py::object borrow(PyObject* p) { return py::reinterpret_borrow<py::object>(p ? p : Py_None); }

// ----- the node as a Python object ------------------------------------------------

int node_traverse(PyObject* self, visitproc visit, void* arg) {
  ArithNode* n = node_of(self);
  Py_VISIT(n->inputs);
  Py_VISIT(n->edges);
  Py_VISIT(n->needs);
  Py_VISIT(n->saved);
  return 0;
}

int node_clear(PyObject* self) {
  ArithNode* n = node_of(self);
  Py_CLEAR(n->inputs);
  Py_CLEAR(n->edges);
  Py_CLEAR(n->needs);
  Py_CLEAR(n->saved);
  return 0;
}

void node_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  ArithNode* n = node_of(self);
  if (n->weakrefs) PyObject_ClearWeakRefs(self);
  node_clear(self);
  for (Shape& s : n->shapes) s.~Shape();
  for (Tensor& t : n->saved_handles) t.~Tensor();
  Py_TYPE(self)->tp_free(self);
}

PyObject* node_name(PyObject* self, PyObject*) { return PyUnicode_FromString(kNames[static_cast<int>(node_of(self)->op)]); }

PyObject* node_repr(PyObject* self) {
  return PyUnicode_FromFormat("<%s>", kNames[static_cast<int>(node_of(self)->op)]);
}

// The saved operands, after the checks lucid.autograd.FunctionCtx.saved_tensors
// makes (same messages); throws RuntimeError.
void check_saved(ArithNode* n) {
  if (n->released)
    throw RuntimeError("saved_tensors: the graph was already freed by a backward pass; call "
                       "backward(retain_graph=True) to go through it twice");
  Py_ssize_t count = PyTuple_GET_SIZE(n->saved);
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* t = PyTuple_GET_ITEM(n->saved, i);
    if (t == Py_None) continue;
    const Tensor& saved = n->saved_handles[i];
    bool same = tensor_object(t)->handle.impl_ptr() == saved.impl_ptr();
    int64_t now = tensor_version(saved);
    if (same && now == n->saved_versions[i]) continue;
    std::string state = same ? "is at version " + std::to_string(now) : "was replaced by the result of an in-place op";
    throw RuntimeError("one of the variables needed for gradient computation has been modified by an inplace "
                       "operation: saved tensor " + std::to_string(i) + " of shape " +
                       shape_str(tensor_object(t)->handle.shape()) + " " + state + "; expected version " +
                       std::to_string(n->saved_versions[i]) + " instead");
  }
}

PyObject* get_saved_tensors(PyObject* self, void*) {
  try {
    check_saved(node_of(self));
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
  Py_INCREF(node_of(self)->saved);
  return node_of(self)->saved;
}

PyObject* get_function(PyObject* self, void*) {
  PyObject* f = functions[static_cast<int>(node_of(self)->op)];
  if (!f) f = Py_None;
  Py_INCREF(f);
  return f;
}

PyObject* get_self(PyObject* self, void*) {
  Py_INCREF(self);
  return self;
}

PyObject* get_num_outputs(PyObject*, void*) { return PyLong_FromLong(1); }

// What lucid._ops.common.binary_meta gives: None when the gradients fit as
// they are, else (a.shape, a.dtype, b.shape, b.dtype).
PyObject* get_meta(PyObject* self, void*) {
  ArithNode* n = node_of(self);
  if (n->same_meta) Py_RETURN_NONE;
  try {
    py::tuple meta(4);
    for (int i = 0; i < 2; ++i) {
      meta[2 * i] = py::tuple(py::cast(n->shapes[i]));
      meta[2 * i + 1] = steal(dtype_object(n->dtypes[i]));
    }
    return meta.release().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyObject* get_released(PyObject* self, void*) { return PyBool_FromLong(node_of(self)->released); }

int set_released(PyObject* self, PyObject* value, void*) {
  int on = value ? PyObject_IsTrue(value) : 0;
  if (on < 0) return -1;
  node_of(self)->released = on != 0;
  return 0;
}

PyObject* get_saved(PyObject* self, void*) {
  Py_INCREF(node_of(self)->saved);
  return node_of(self)->saved;
}

// The walk frees a node's saved tensors (`_saved = ()`) after a backward
// without retain_graph.
int set_saved(PyObject* self, PyObject* value, void*) {
  if (!value || !PyTuple_Check(value) || PyTuple_GET_SIZE(value) != 0) {
    PyErr_SetString(PyExc_TypeError, "_saved: only () can be assigned (it frees the saved tensors)");
    return -1;
  }
  ArithNode* n = node_of(self);
  Py_INCREF(value);
  Py_SETREF(n->saved, value);
  for (Tensor& t : n->saved_handles) t = Tensor();
  return 0;
}

PyGetSetDef node_getsets[] = {
    {"function", get_function, nullptr, "The op's lucid.autograd.Function (its recorded backward formula).",
     nullptr},
    {"ctx", get_self, nullptr, "The node itself: it holds what its backward reads.", nullptr},
    {"num_outputs", get_num_outputs, nullptr, nullptr, nullptr},
    {"saved_tensors", get_saved_tensors, nullptr, "The saved operands (RuntimeError when modified since).",
     nullptr},
    {"meta", get_meta, nullptr, nullptr, nullptr},
    {"_released", get_released, set_released, nullptr, nullptr},
    {"_saved", get_saved, set_saved, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMemberDef node_members[] = {
    {"inputs", T_OBJECT, offsetof(ArithNode, inputs), READONLY, nullptr},
    {"edges", T_OBJECT, offsetof(ArithNode, edges), READONLY, nullptr},
    {"needs_input_grad", T_OBJECT, offsetof(ArithNode, needs), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS, "The node's name: AddBackward, SubBackward, MulBackward, DivBackward."},
    {nullptr, nullptr, 0, nullptr}};

// ----- recording --------------------------------------------------------------------

PyObject* edge_of(PyObject* t) {
  TensorObject* o = tensor_object(t);
  return Py_BuildValue("(On)", o->grad_fn ? o->grad_fn : Py_None, o->output_nr);
}

// Makes `out` the output of a new ArithNode over `a` and `b` (tensor objects).
void record(Arith op, PyObject* a, PyObject* b, PyObject* out) {
  TensorObject *ta = tensor_object(a), *tb = tensor_object(b);
  bool n0 = ta->requires_grad, n1 = tb->requires_grad;
  PyObject* o = ArithNodeType.tp_alloc(&ArithNodeType, 0);
  if (!o) throw py::error_already_set();
  py::object keep = py::reinterpret_steal<py::object>(o);
  ArithNode* n = node_of(o);
  for (Shape& s : n->shapes) new (&s) Shape();
  for (Tensor& t : n->saved_handles) new (&t) Tensor();
  n->op = op;
  const Tensor &ha = ta->handle, &hb = tb->handle;
  n->same_meta = ha.dtype() == hb.dtype() && ha.shape() == hb.shape();
  if (!n->same_meta) {
    n->shapes[0] = ha.shape();
    n->shapes[1] = hb.shape();
    n->dtypes[0] = ha.dtype();
    n->dtypes[1] = hb.dtype();
  }
  n->inputs = PyTuple_Pack(2, n0 ? a : Py_None, n1 ? b : Py_None);
  py::object e0 = n0 ? steal(edge_of(a)) : borrow(Py_None), e1 = n1 ? steal(edge_of(b)) : borrow(Py_None);
  n->edges = PyTuple_Pack(2, e0.ptr(), e1.ptr());
  n->needs = PyTuple_Pack(2, n0 ? Py_True : Py_False, n1 ? Py_True : Py_False);
  // Each factor is saved only when the other's gradient needs it, so an
  // in-place write to `y` after `y * 2.0` is no error (as in PyTorch); div
  // always reads b.
  PyObject* sa = nullptr;
  PyObject* sb = nullptr;
  if (op == Arith::Mul) {
    sa = n1 ? a : Py_None;
    sb = n0 ? b : Py_None;
  } else if (op == Arith::Div) {
    sa = n1 ? a : Py_None;
    sb = b;
  }
  n->saved = sa ? PyTuple_Pack(2, sa, sb) : PyTuple_New(0);
  if (!n->inputs || !n->edges || !n->needs || !n->saved) throw py::error_already_set();
  if (sa) {
    PyObject* pair[2] = {sa, sb};
    for (int i = 0; i < 2; ++i) {
      if (pair[i] == Py_None) continue;
      n->saved_handles[i] = tensor_object(pair[i])->handle;
      n->saved_versions[i] = tensor_version(n->saved_handles[i]);
    }
  }
  TensorObject* r = tensor_object(out);
  r->requires_grad = 1;
  Py_XSETREF(r->grad_fn, keep.release().ptr());
  r->output_nr = 0;
}

Tensor kernel(Arith op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case Arith::Add: return ops::add(a, b);
    case Arith::Sub: return ops::sub(a, b);
    case Arith::Mul: return ops::mul(a, b);
    case Arith::Div: return ops::div(a, b);
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

// ----- first-order backward -----------------------------------------------------------

// A broadcast gradient summed back to an input's shape and cast to its dtype
// (lucid._ops.elementwise._grad_for: sum_to_shape, then .to(dtype)).
Tensor grad_for(Tensor g, const Shape& shape, DType dtype) {
  if (g.shape() != shape) {
    const Shape& gs = g.shape();
    size_t lead = gs.size() - shape.size();
    std::vector<int64_t> dims;
    for (size_t i = 0; i < lead; ++i) dims.push_back(static_cast<int64_t>(i));
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] == 1 && gs[lead + i] != 1) dims.push_back(static_cast<int64_t>(lead + i));
    if (!dims.empty()) g = ops::sum(g, dims, true, std::nullopt);
    g = ops::reshape(g, shape);
  }
  return g.dtype() == dtype ? g : ops::astype(g, dtype);
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

bool is_arith_node(PyObject* node) { return Py_TYPE(node) == &ArithNodeType; }

py::object arith_backward(PyObject* node, py::handle grad) {
  ArithNode* n = node_of(node);
  bool n0 = PyTuple_GET_ITEM(n->inputs, 0) != Py_None, n1 = PyTuple_GET_ITEM(n->inputs, 1) != Py_None;
  const Tensor g = handle_of(grad.ptr());
  std::optional<Tensor> ga, gb;  // empty with the flag set: `grad` itself
  switch (n->op) {
    case Arith::Add:
      break;
    case Arith::Sub:
      if (n1) gb = ops::neg(g);
      break;
    case Arith::Mul:
      check_saved(n);
      if (n0) ga = ops::mul(g, n->saved_handles[1]);
      if (n1) gb = ops::mul(g, n->saved_handles[0]);
      break;
    case Arith::Div: {
      check_saved(n);
      const Tensor &a = n->saved_handles[0], &b = n->saved_handles[1];
      if (n0) ga = ops::div(g, b);
      if (n1) gb = ops::neg(ops::div(ops::mul(g, a), ops::mul(b, b)));
      break;
    }
  }
  auto result = [&](bool needed, std::optional<Tensor>& t, int i) -> py::object {
    if (!needed) return py::none();
    if (n->same_meta) return t ? steal(wrap(std::move(*t))) : py::reinterpret_borrow<py::object>(grad);
    return steal(wrap(grad_for(t ? std::move(*t) : g, n->shapes[i], n->dtypes[i])));
  };
  py::object r0 = result(n0, ga, 0);
  py::object r1 = result(n1, gb, 1);
  return py::make_tuple(r0, r1);
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
    {"autograd_div", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function_form<Arith::Div>)),
     METH_FASTCALL, "input / other (true division), recorded when an input requires grad."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

PyNumberMethods* arith_number_methods() { return &number_methods; }

void init_arithmetic(py::module_& m) {
  PyTypeObject& t = ArithNodeType;
  t.tp_name = "lucid._C.ArithNode";
  t.tp_doc = "The graph node of add / sub / mul / div (csrc/autograd/arithmetic.h).";
  t.tp_basicsize = sizeof(ArithNode);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  t.tp_dealloc = node_dealloc;
  t.tp_traverse = node_traverse;
  t.tp_clear = node_clear;
  t.tp_repr = node_repr;
  t.tp_weaklistoffset = offsetof(ArithNode, weakrefs);
  t.tp_getset = node_getsets;
  t.tp_members = node_members;
  t.tp_methods = node_methods;
  if (PyType_Ready(&t) < 0) throw py::error_already_set();
  Py_INCREF(&t);
  m.attr("ArithNode") = py::handle(reinterpret_cast<PyObject*>(&t));

  for (PyMethodDef* d = function_defs; d->ml_name; ++d) {
    PyObject* f = PyCFunction_NewEx(d, nullptr, m.attr("__name__").ptr());
    if (!f) throw py::error_already_set();
    m.attr(d->ml_name) = py::reinterpret_steal<py::object>(f);
  }
  // lucid/_ops/elementwise.py, at import: the coercion of other operands
  // (lists, arrays) and the Functions whose formulas serve create_graph.
  m.def("_register_arithmetic", [](py::object coercion, py::object add, py::object sub, py::object mul,
                                   py::object div) {
    coerce = coercion.release().ptr();
    PyObject* fs[4] = {add.release().ptr(), sub.release().ptr(), mul.release().ptr(), div.release().ptr()};
    for (int i = 0; i < 4; ++i) functions[i] = fs[i];
  });
}

}  // namespace lucid::autograd
