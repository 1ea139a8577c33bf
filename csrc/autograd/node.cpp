// CppNode; see node.h.
#include "autograd/node.h"

#include <pybind11/stl.h>
#include <structmember.h>

#include <new>
#include <string>
#include <vector>

#include "autograd/basic_index.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "core/version.h"
#include "ops/copy.h"
#include "ops/reduction.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace {

PyTypeObject CppNodeType = {PyVarObject_HEAD_INIT(nullptr, 0)};

CppNode* node_of(PyObject* o) { return reinterpret_cast<CppNode*>(o); }

int node_traverse(PyObject* self, visitproc visit, void* arg) {
  CppNode* n = node_of(self);
  Py_VISIT(n->inputs);
  Py_VISIT(n->edges);
  Py_VISIT(n->needs);
  Py_VISIT(n->saved);
  return 0;
}

int node_clear(PyObject* self) {
  CppNode* n = node_of(self);
  Py_CLEAR(n->inputs);
  Py_CLEAR(n->edges);
  Py_CLEAR(n->needs);
  Py_CLEAR(n->saved);
  return 0;
}

void node_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  CppNode* n = node_of(self);
  if (n->weakrefs) PyObject_ClearWeakRefs(self);
  node_clear(self);
  for (Shape& s : n->shapes) s.~Shape();
  for (Tensor& t : n->saved_handles) t.~Tensor();
  n->input_shape.~Shape();
  n->dims.~optional();
  n->index_plan.~vector();
  n->params.~vector();
  n->buffers.~vector();
  Py_TYPE(self)->tp_free(self);
}

PyObject* node_name(PyObject* self, PyObject*) { return PyUnicode_FromString(node_of(self)->kind->name); }

PyObject* node_repr(PyObject* self) { return PyUnicode_FromFormat("<%s>", node_of(self)->kind->name); }

PyObject* get_saved_tensors(PyObject* self, void*) {
  try {
    check_saved(*node_of(self));
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
  Py_INCREF(node_of(self)->saved);
  return node_of(self)->saved;
}

PyObject* get_function(PyObject* self, void*) {
  PyObject* f = node_of(self)->kind->function;
  if (!f) f = Py_None;
  Py_INCREF(f);
  return f;
}

PyObject* get_self(PyObject* self, void*) {
  Py_INCREF(self);
  return self;
}

PyObject* get_op(PyObject* self, void*) { return PyUnicode_InternFromString(node_of(self)->kind->op); }

PyObject* get_num_outputs(PyObject* self, void*) { return PyLong_FromLong(node_of(self)->num_outputs); }

// What lucid._ops.common.binary_meta gives a two-input op's formula: None when
// the gradients fit as they are, else (a.shape, a.dtype, b.shape, b.dtype).
PyObject* get_meta(PyObject* self, void*) {
  CppNode* n = node_of(self);
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
  CppNode* n = node_of(self);
  Py_INCREF(value);
  Py_SETREF(n->saved, value);
  for (Tensor& t : n->saved_handles) t = Tensor();
  n->buffers.clear();
  return 0;
}

PyObject* get_input_shape(PyObject* self, void*) {
  try {
    return py::tuple(py::cast(node_of(self)->input_shape)).release().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyObject* get_input_dtype(PyObject* self, void*) { return dtype_object(node_of(self)->input_dtype); }

PyObject* get_dims(PyObject* self, void*) {
  const auto& d = node_of(self)->dims;
  if (!d) Py_RETURN_NONE;
  try {
    return py::cast(*d).release().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

// cat's / stack's axis (node.dims[0]).
PyObject* get_dim(PyObject* self, void*) {
  const auto& d = node_of(self)->dims;
  if (!d || d->empty()) Py_RETURN_NONE;
  return PyLong_FromLongLong((*d)[0]);
}

// layer_norm's eps, var's correction: scalars[0].
PyObject* get_scalar(PyObject* self, void*) { return PyFloat_FromDouble(node_of(self)->scalars[0]); }

PyObject* get_plan(PyObject* self, void*) { return index_plan_object(*node_of(self)); }

PyObject* get_params(PyObject* self, void*) {
  try {
    return py::tuple(py::cast(node_of(self)->params)).release().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

// The tensors only the node holds, None for an empty slot (cross_entropy's general form reads them).
PyObject* get_buffers(PyObject* self, void*) {
  const std::vector<Tensor>& b = node_of(self)->buffers;
  PyObject* out = PyTuple_New(static_cast<Py_ssize_t>(b.size()));
  if (!out) return nullptr;
  for (size_t i = 0; i < b.size(); ++i) {
    PyObject* t = b[i].defined() ? wrap(b[i]) : (Py_INCREF(Py_None), Py_None);
    if (!t) {
      Py_DECREF(out);
      return nullptr;
    }
    PyTuple_SET_ITEM(out, static_cast<Py_ssize_t>(i), t);
  }
  return out;
}

PyObject* get_scalars(PyObject* self, void*) {
  const double* v = node_of(self)->scalars;
  return Py_BuildValue("(dd)", v[0], v[1]);
}

PyGetSetDef node_getsets[] = {
    {"function", get_function, nullptr, "The op's lucid.autograd.Function (its recorded backward formula).",
     nullptr},
    {"ctx", get_self, nullptr, "The node itself: it holds what its backward reads.", nullptr},
    {"op", get_op, nullptr, "The op's name ('mul', 'exp').", nullptr},
    {"num_outputs", get_num_outputs, nullptr, nullptr, nullptr},
    {"saved_tensors", get_saved_tensors, nullptr, "The saved tensors (RuntimeError when modified since).",
     nullptr},
    {"meta", get_meta, nullptr, nullptr, nullptr},
    {"shape", get_input_shape, nullptr, "A reduction's input shape (what _Sum / _Mean read).", nullptr},
    {"in_shape", get_input_shape, nullptr, "A reshape's input shape (what _Reshape reads).", nullptr},
    {"in_dtype", get_input_dtype, nullptr, nullptr, nullptr},
    {"dims", get_dims, nullptr, "A reduction's axes (None: all).", nullptr},
    {"dim", get_dim, nullptr, "cat's / stack's axis (what _Cat / _Stack read).", nullptr},
    {"sizes", get_params, nullptr, "cat's joined sizes along its axis (what _Cat reads).", nullptr},
    {"eps", get_scalar, nullptr, "layer_norm's eps (what _LayerNorm reads).", nullptr},
    {"correction", get_scalar, nullptr, "var's correction (what _Var reads).", nullptr},
    {"plan", get_plan, nullptr, "Basic indexing's slices (what _BasicIndex reads).", nullptr},
    {"params", get_params, nullptr, "An nn op's integer arguments (conv geometry, pool window: nn.cpp).", nullptr},
    {"buffers", get_buffers, nullptr, "Tensors only the node holds (None: an empty slot).", nullptr},
    {"scalars", get_scalars, nullptr, "The op's number arguments (softplus: beta, threshold).", nullptr},
    {"_released", get_released, set_released, nullptr, nullptr},
    {"_saved", get_saved, set_saved, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMemberDef node_members[] = {
    {"inputs", T_OBJECT, offsetof(CppNode, inputs), READONLY, nullptr},
    {"edges", T_OBJECT, offsetof(CppNode, edges), READONLY, nullptr},
    {"needs_input_grad", T_OBJECT, offsetof(CppNode, needs), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS, "The node's name (MulBackward, ExpBackward ...)."},
    {nullptr, nullptr, 0, nullptr}};

PyObject* edge_of(PyObject* t) {
  TensorObject* o = tensor_object(t);
  return Py_BuildValue("(On)", o->grad_fn ? o->grad_fn : Py_None, o->output_nr);
}

// A broadcast gradient summed back to an input's shape and cast to its dtype
// (lucid._ops.elementwise._grad_for: sum_to_shape, then .to(dtype)).
Tensor grad_for(const Tensor& g, const Shape& shape, DType dtype) {
  Tensor r = sum_to_shape(g, shape);
  return r.dtype() == dtype ? r : ops::astype(r, dtype);
}

}  // namespace

Tensor sum_to_shape(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const Shape& gs = g.shape();
  size_t lead = gs.size() - shape.size();
  std::vector<int64_t> dims;
  for (size_t i = 0; i < lead; ++i) dims.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && gs[lead + i] != 1) dims.push_back(static_cast<int64_t>(lead + i));
  return ops::reshape(dims.empty() ? g : ops::sum(g, dims, true, std::nullopt), shape);
}

bool is_cpp_node(PyObject* node) { return Py_TYPE(node) == &CppNodeType; }

bool has_cpp_formula(PyObject* node) {
  return is_cpp_node(node) && (node_of(node)->kind->backward || node_of(node)->kind->backward_outputs);
}

CppNode& record_node(NodeKind& kind, PyObject* const* inputs, int num_inputs, PyObject* const* saved,
                     int num_saved, PyObject* out) {
  if (num_inputs < 1 || num_saved < 0 || num_saved > 4)
    throw RuntimeError("record_node: a node takes at least one input and at most four saved tensors");
  PyObject* o = CppNodeType.tp_alloc(&CppNodeType, 0);
  if (!o) throw py::error_already_set();
  py::object keep = py::reinterpret_steal<py::object>(o);
  CppNode* n = node_of(o);
  for (Shape& s : n->shapes) new (&s) Shape();
  for (Tensor& t : n->saved_handles) new (&t) Tensor();
  new (&n->input_shape) Shape();
  new (&n->dims) std::optional<std::vector<int64_t>>();
  new (&n->index_plan) std::vector<std::vector<int64_t>>();
  new (&n->params) std::vector<int64_t>();
  new (&n->buffers) std::vector<Tensor>();
  n->kind = &kind;
  n->num_inputs = num_inputs;
  n->num_outputs = 1;
  n->num_saved = num_saved;
  n->same_meta = true;
  if (kind.broadcasts) {
    const Tensor &a = tensor_object(inputs[0])->handle, &b = tensor_object(inputs[1])->handle;
    n->same_meta = a.dtype() == b.dtype() && a.shape() == b.shape();
    if (!n->same_meta) {
      n->shapes[0] = a.shape();
      n->shapes[1] = b.shape();
      n->dtypes[0] = a.dtype();
      n->dtypes[1] = b.dtype();
    }
  }
  n->inputs = PyTuple_New(num_inputs);
  n->edges = PyTuple_New(num_inputs);
  n->needs = PyTuple_New(num_inputs);
  n->saved = PyTuple_New(num_saved);
  if (!n->inputs || !n->edges || !n->needs || !n->saved) throw py::error_already_set();
  for (int i = 0; i < num_inputs; ++i) {
    bool need = inputs[i] != Py_None && tensor_object(inputs[i])->requires_grad;
    PyObject* in = need ? inputs[i] : Py_None;
    PyObject* edge = need ? edge_of(inputs[i]) : (Py_INCREF(Py_None), Py_None);
    if (!edge) throw py::error_already_set();
    Py_INCREF(in);
    PyTuple_SET_ITEM(n->inputs, i, in);
    PyTuple_SET_ITEM(n->edges, i, edge);
    PyObject* flag = need ? Py_True : Py_False;
    Py_INCREF(flag);
    PyTuple_SET_ITEM(n->needs, i, flag);
  }
  for (int i = 0; i < num_saved; ++i) {
    Py_INCREF(saved[i]);
    PyTuple_SET_ITEM(n->saved, i, saved[i]);
    if (saved[i] == Py_None) continue;
    n->saved_handles[i] = tensor_object(saved[i])->handle;
    n->saved_versions[i] = tensor_version(n->saved_handles[i]);
  }
  if (out) {
    TensorObject* r = tensor_object(out);
    r->requires_grad = 1;
    Py_XSETREF(r->grad_fn, keep.release().ptr());
    r->output_nr = 0;
  } else {
    keep.release();  // record_outputs hands it to the outputs
  }
  return *n;
}

CppNode& record_outputs(NodeKind& kind, PyObject* const* inputs, int num_inputs, PyObject* const* saved,
                        int num_saved, PyObject* const* outputs, int num_outputs) {
  if (kind.backward || num_outputs < 1) throw RuntimeError("record_outputs: not a kind of several outputs");
  CppNode& n = record_node(kind, inputs, num_inputs, saved, num_saved, nullptr);
  py::object node = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(&n));  // the one reference
  n.num_outputs = num_outputs;
  bool held = false;
  for (int i = 0; i < num_outputs; ++i) {
    if (!outputs[i]) continue;
    TensorObject* r = tensor_object(outputs[i]);
    if (!is_floating(r->handle.dtype())) continue;
    r->requires_grad = 1;
    Py_INCREF(node.ptr());
    Py_XSETREF(r->grad_fn, node.ptr());
    r->output_nr = i;
    held = true;
  }
  if (!held) throw RuntimeError(std::string("record_outputs: ") + kind.name + " has no floating-point output");
  return n;
}

void check_saved(const CppNode& n) {
  if (n.released)
    throw RuntimeError("saved_tensors: the graph was already freed by a backward pass; call "
                       "backward(retain_graph=True) to go through it twice");
  Py_ssize_t count = PyTuple_GET_SIZE(n.saved);
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* t = PyTuple_GET_ITEM(n.saved, i);
    if (t == Py_None) continue;
    const Tensor& saved = n.saved_handles[i];
    bool same = tensor_object(t)->handle.impl_ptr() == saved.impl_ptr();
    int64_t now = tensor_version(saved);
    if (same && now == n.saved_versions[i]) continue;
    std::string state = same ? "is at version " + std::to_string(now) : "was replaced by the result of an in-place op";
    throw RuntimeError("one of the variables needed for gradient computation has been modified by an inplace "
                       "operation: saved tensor " + std::to_string(i) + " of shape " +
                       shape_str(tensor_object(t)->handle.shape()) + " " + state + "; expected version " +
                       std::to_string(n.saved_versions[i]) + " instead");
  }
}

py::object cpp_backward(PyObject* node, const py::tuple& grads) {
  const CppNode& n = *node_of(node);
  if (n.num_saved) check_saved(n);
  if (grads.size() != static_cast<size_t>(n.num_outputs))
    throw RuntimeError(std::string(n.kind->name) + ": expected " + std::to_string(n.num_outputs) + " gradients");
  py::handle grad = grads[0];
  if (!has_cpp_formula(node)) throw RuntimeError(std::string(n.kind->name) + ": its formula is Python");
  InputGrads r;
  Tensor g;
  if (n.kind->backward_outputs) {
    std::vector<std::optional<Tensor>> gs(grads.size());
    for (size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].is_none()) gs[i] = handle_of(grads[i].ptr());
    r = n.kind->backward_outputs(n, gs);
  } else {
    g = handle_of(grad.ptr());
    r = n.kind->backward(n, g);
  }
  if (r.grad.size() < static_cast<size_t>(n.num_inputs) || r.pass.size() < static_cast<size_t>(n.num_inputs))
    throw RuntimeError(std::string(n.kind->name) + ": the C++ formula returned fewer gradients than inputs");
  py::tuple out(n.num_inputs);
  for (int i = 0; i < n.num_inputs; ++i) {
    if (PyTuple_GET_ITEM(n.inputs, i) == Py_None || (!r.pass[i] && !r.grad[i])) {
      out[i] = py::none();
    } else if (n.same_meta) {
      out[i] = r.pass[i] ? py::reinterpret_borrow<py::object>(grad) : steal(wrap(std::move(*r.grad[i])));
    } else {
      out[i] = steal(wrap(grad_for(r.pass[i] ? handle_of(grad.ptr()) : std::move(*r.grad[i]), n.shapes[i], n.dtypes[i])));
    }
  }
  return std::move(out);
}

void init_node(py::module_& m) {
  PyTypeObject& t = CppNodeType;
  t.tp_name = "lucid._C.CppNode";
  t.tp_doc = "A graph node recorded in C++ (csrc/autograd/node.h).";
  t.tp_basicsize = sizeof(CppNode);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  t.tp_dealloc = node_dealloc;
  t.tp_traverse = node_traverse;
  t.tp_clear = node_clear;
  t.tp_repr = node_repr;
  t.tp_weaklistoffset = offsetof(CppNode, weakrefs);
  t.tp_getset = node_getsets;
  t.tp_members = node_members;
  t.tp_methods = node_methods;
  if (PyType_Ready(&t) < 0) throw py::error_already_set();
  Py_INCREF(&t);
  m.attr("CppNode") = py::handle(reinterpret_cast<PyObject*>(&t));
}

}  // namespace lucid::autograd
