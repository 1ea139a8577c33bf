// lucid._C.TensorBase; see tensor_object.h.
#include "autograd/tensor_object.h"

#include <structmember.h>

#include <algorithm>
#include <cstddef>
#include <new>
#include <string>
#include <vector>

#include "autograd/arithmetic.h"
#include "core/errors.h"
#include "core/half.h"
#include "core/version.h"
#include "ops/copy.h"

namespace lucid::autograd {

namespace {

PyTypeObject TensorBaseType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// What results are made of: lucid.Tensor once `_register_tensor_class` ran
// (lucid/_tensor.py, at import), TensorBase before. The dtype and device
// objects `t.dtype` / `t.device` return, per engine enum; before
// registration they read as their names. Raw pointers that are never
// released: they live as long as the interpreter.
PyTypeObject* result_class = &TensorBaseType;
PyObject* dtype_objects[kNumDTypes] = {};
PyObject* device_objects[2] = {};

// A lazy module's placeholder (nn.UninitializedParameter) is the one tensor
// object without an engine tensor that lucid makes (Tensor.__new__ alone makes
// another).
constexpr const char* kNoValues =
    "this tensor has no shape or values yet; run one forward pass (or load_state_dict) to materialize a lazy "
    "module's parameter (other tensors are made by lucid.tensor(...) or an op, not by Tensor.__new__ alone)";

// Sets the Python error for the exception being handled (the same mapping
// every binding gets: module.cpp's translator, then pybind11's own).
void set_python_error() { py::detail::try_translate_exceptions(); }

// The engine tensor of `self`, or NULL with ValueError set.
const Tensor* handle_or_error(PyObject* self) {
  const Tensor& h = tensor_object(self)->handle;
  if (h.defined()) return &h;
  PyErr_Format(PyExc_ValueError, "%s: %s", Py_TYPE(self)->tp_name, kNoValues);
  return nullptr;
}

PyObject* new_object(PyTypeObject* type) {
  PyObject* o = type->tp_alloc(type, 0);  // zeroed: grad / grad_fn / weakrefs NULL, flags 0
  if (o) new (&tensor_object(o)->handle) Tensor();
  return o;
}

// ----- life cycle ------------------------------------------------------------

PyObject* tensor_new(PyTypeObject* type, PyObject* /*args*/, PyObject* /*kwargs*/) { return new_object(type); }

// Whether a tensor on `h` may require grad (floating point only); TypeError set if not.
bool may_require_grad(const Tensor& h) {
  if (is_floating(h.dtype())) return true;
  PyErr_Format(PyExc_TypeError, "requires_grad: only floating-point tensors can require grad, got lucid.%s",
               dtype_name(h.dtype()));
  return false;
}

// Tensor(impl, requires_grad=False): a new tensor object on `impl`'s engine
// tensor with no autograd history (what lucid.Tensor.__init__ was).
int tensor_init(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"impl", "requires_grad", nullptr};
  PyObject* impl = nullptr;
  PyObject* requires_grad = Py_False;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:Tensor", const_cast<char**>(keywords), &impl, &requires_grad))
    return -1;
  if (!is_tensor(impl)) {
    PyErr_SetString(PyExc_TypeError, "lucid.Tensor(...) wraps an engine tensor; create tensors with lucid.tensor(data)");
    return -1;
  }
  int wants = PyObject_IsTrue(requires_grad);
  if (wants < 0) return -1;
  if (wants) {  // checked before anything changes
    const Tensor* h = handle_or_error(impl);
    if (!h || !may_require_grad(*h)) return -1;
  }
  TensorObject* t = tensor_object(self);
  t->handle = tensor_object(impl)->handle;
  Py_CLEAR(t->grad);
  Py_CLEAR(t->grad_fn);
  t->output_nr = 0;
  t->retain_grad = 0;
  t->requires_grad = static_cast<char>(wants);
  return 0;
}

int tensor_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(tensor_object(self)->grad);
  Py_VISIT(tensor_object(self)->grad_fn);
  return 0;
}

int tensor_clear(PyObject* self) {
  Py_CLEAR(tensor_object(self)->grad);
  Py_CLEAR(tensor_object(self)->grad_fn);
  return 0;
}

void tensor_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  TensorObject* t = tensor_object(self);
  if (t->weakrefs) PyObject_ClearWeakRefs(self);
  tensor_clear(self);
  t->handle.~Tensor();
  Py_TYPE(self)->tp_free(self);
}

// ----- attributes ------------------------------------------------------------

PyObject* get_impl(PyObject* self, void*) {
  // The engine tensor is this object: `t._impl` is `t`, for the code that
  // passes `x._impl` to `_C` (the same handle either way).
  Py_INCREF(self);
  return self;
}

// `t._impl = other` (x.data = y, in-place ops that rebind, out=): `t` holds
// `other`'s engine tensor from now on, keeping its own autograd state.
int set_impl(PyObject* self, PyObject* value, void*) {
  if (!value || !is_tensor(value)) {
    PyErr_SetString(PyExc_TypeError, "_impl: expected a tensor");
    return -1;
  }
  const Tensor* h = handle_or_error(value);
  if (!h) return -1;
  tensor_object(self)->handle = *h;
  return 0;
}

// A tuple of Python ints; NULL with the error set.
PyObject* int_tuple(const std::vector<int64_t>& values) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(values.size()));
  if (!tuple) return nullptr;
  for (size_t i = 0; i < values.size(); ++i) {
    PyObject* n = PyLong_FromLongLong(values[i]);
    if (!n) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), n);
  }
  return tuple;
}

PyObject* get_shape(PyObject* self, void*) {
  const Tensor* h = handle_or_error(self);
  return h ? int_tuple(h->shape()) : nullptr;
}

PyObject* get_ndim(PyObject* self, void*) {
  const Tensor* h = handle_or_error(self);
  return h ? PyLong_FromLong(h->ndim()) : nullptr;
}

PyObject* get_dtype_name(PyObject* self, void*) {
  const Tensor* h = handle_or_error(self);
  return h ? PyUnicode_InternFromString(dtype_name(h->dtype())) : nullptr;
}

PyObject* get_device_name(PyObject* self, void*) {
  const Tensor* h = handle_or_error(self);
  return h ? PyUnicode_InternFromString(device_name(h->device())) : nullptr;
}

PyObject* get_dtype(PyObject* self, void*) {
  const Tensor* h = handle_or_error(self);
  return h ? dtype_object(h->dtype()) : nullptr;
}

PyObject* get_device(PyObject* self, void* closure) {
  const Tensor* h = handle_or_error(self);
  if (!h) return nullptr;
  PyObject* o = device_objects[static_cast<int>(h->device())];
  if (!o) return get_device_name(self, closure);
  Py_INCREF(o);
  return o;
}

PyObject* get_version(PyObject* self, void*) {
  const Tensor* h = handle_or_error(self);
  return h ? PyLong_FromLongLong(tensor_version(*h)) : nullptr;
}

int set_version(PyObject* self, PyObject* value, void*) {
  const Tensor* h = handle_or_error(self);
  if (!h) return -1;
  long long v = value ? PyLong_AsLongLong(value) : -1;
  if (!value || (v == -1 && PyErr_Occurred())) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "version: expected an int");
    return -1;
  }
  set_tensor_version(*h, v);
  return 0;
}

// `requires_grad` validates (floating point only); `_requires_grad` is the
// plain flag the op wrappers read and write.
PyObject* get_flag(PyObject* self, void* closure) {
  char flag = closure ? tensor_object(self)->retain_grad : tensor_object(self)->requires_grad;
  return PyBool_FromLong(flag);
}

int set_flag(PyObject* self, PyObject* value, void* closure) {
  int on = value ? PyObject_IsTrue(value) : 0;
  if (on < 0) return -1;
  (closure ? tensor_object(self)->retain_grad : tensor_object(self)->requires_grad) = static_cast<char>(on);
  return 0;
}

int set_requires_grad(PyObject* self, PyObject* value, void*) {
  int on = value ? PyObject_IsTrue(value) : 0;
  if (on < 0) return -1;
  if (on) {
    const Tensor* h = handle_or_error(self);
    if (!h || !may_require_grad(*h)) return -1;
  }
  tensor_object(self)->requires_grad = static_cast<char>(on);
  return 0;
}

char retain_grad_tag;  // its address tells get_flag / set_flag which flag

PyGetSetDef getsets[] = {
    {"_impl", get_impl, set_impl, "The engine tensor: this object (kept for the code that passes x._impl).",
     nullptr},
    {"shape", get_shape, nullptr, "The sizes of the dimensions, as a tuple of ints.", nullptr},
    {"ndim", get_ndim, nullptr, "The number of dimensions.", nullptr},
    {"dtype", get_dtype, nullptr, "The element type (a lucid.dtype).", nullptr},
    {"device", get_device, nullptr, "The stream holding the data (a lucid.device).", nullptr},
    {"_dtype_name", get_dtype_name, nullptr, "The engine's name of the dtype ('float32').", nullptr},
    {"_device_name", get_device_name, nullptr, "The engine's name of the device ('cpu' / 'gpu').", nullptr},
    {"_version", get_version, set_version, "In-place writes this tensor's memory has had (core/version.h).",
     nullptr},
    {"requires_grad", get_flag, set_requires_grad, "Whether autograd records operations on this tensor.",
     nullptr},
    {"_requires_grad", get_flag, set_flag, nullptr, nullptr},
    {"_retain_grad", get_flag, set_flag, nullptr, &retain_grad_tag},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMemberDef members[] = {
    {"grad", T_OBJECT, offsetof(TensorObject, grad), 0, "The accumulated gradient (None until backward)."},
    {"grad_fn", T_OBJECT, offsetof(TensorObject, grad_fn), 0, "The graph node that made this tensor, or None."},
    {"_output_nr", T_PYSSIZET, offsetof(TensorObject, output_nr), 0, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

// ----- methods -----------------------------------------------------------------

// t.item(): the one element as a Python bool, int or float (float16 and
// bfloat16 widen exactly; float32 becomes the double of the same value).
PyObject* item(PyObject* self, PyObject*) {
  const Tensor* h = handle_or_error(self);
  if (!h) return nullptr;
  try {
    if (h->numel() != 1)
      throw ValueError("item(): expected a tensor with one element, got shape " + shape_str(h->shape()));
    Tensor t = h->device() == Device::CPU ? *h : ops::to_device(*h, Device::CPU);
    const void* p = t.raw_data();
    switch (t.dtype()) {
      case DType::Bool: return PyBool_FromLong(*static_cast<const bool*>(p));
      case DType::UInt8: return PyLong_FromLong(*static_cast<const uint8_t*>(p));
      case DType::Int8: return PyLong_FromLong(*static_cast<const int8_t*>(p));
      case DType::Int16: return PyLong_FromLong(*static_cast<const int16_t*>(p));
      case DType::Int32: return PyLong_FromLong(*static_cast<const int32_t*>(p));
      case DType::Int64: return PyLong_FromLongLong(*static_cast<const int64_t*>(p));
      case DType::Float16: return PyFloat_FromDouble(static_cast<float>(*static_cast<const float16*>(p)));
      case DType::BFloat16: return PyFloat_FromDouble(static_cast<float>(*static_cast<const bfloat16*>(p)));
      case DType::Float32: return PyFloat_FromDouble(*static_cast<const float*>(p));
      case DType::Float64: return PyFloat_FromDouble(*static_cast<const double*>(p));
    }
    throw TypeError("item(): unsupported dtype");
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

PyObject* numel(PyObject* self, PyObject*) {
  const Tensor* h = handle_or_error(self);
  return h ? PyLong_FromLongLong(h->numel()) : nullptr;
}

PyObject* is_contiguous(PyObject* self, PyObject*) {
  const Tensor* h = handle_or_error(self);
  return h ? PyBool_FromLong(h->device() == Device::GPU || h->is_contiguous()) : nullptr;
}

// The CPU view's strides in elements (a tuple); empty on the GPU stream.
PyObject* strides(PyObject* self, PyObject*) {
  const Tensor* h = handle_or_error(self);
  if (!h) return nullptr;
  return int_tuple(h->device() == Device::CPU ? h->strides() : Strides{});
}

PyObject* storage_offset(PyObject* self, PyObject*) {
  const Tensor* h = handle_or_error(self);
  if (!h) return nullptr;
  return PyLong_FromLongLong(h->device() == Device::CPU ? h->offset() : 0);
}

PyObject* data_ptr(PyObject* self, PyObject*) {
  const Tensor* h = handle_or_error(self);
  if (!h) return nullptr;
  return PyLong_FromVoidPtr(h->device() == Device::CPU ? h->raw_data() : nullptr);
}

// Two tensors' handles, for the comparisons below; false with an error set.
bool pair(PyObject* self, PyObject* other, const Tensor*& a, const Tensor*& b) {
  if (!is_tensor(other)) {
    PyErr_SetString(PyExc_TypeError, "expected a tensor");
    return false;
  }
  a = handle_or_error(self);
  b = a ? handle_or_error(other) : nullptr;
  return b != nullptr;
}

// Whether two tensors have one shape and one dtype: then the gradient of a
// binary op fits both inputs as it is (no reduction, no cast), which
// lucid._ops.common.binary_meta records in one call instead of four reads.
PyObject* same_meta(PyObject* self, PyObject* other) {
  const Tensor *a, *b;
  if (!pair(self, other, a, b)) return nullptr;
  return PyBool_FromLong(a->dtype() == b->dtype() && a->shape() == b->shape());
}

PyObject* same_shape(PyObject* self, PyObject* other) {
  const Tensor *a, *b;
  if (!pair(self, other, a, b)) return nullptr;
  return PyBool_FromLong(a->shape() == b->shape());
}

PyObject* same_storage(PyObject* self, PyObject* other) {
  const Tensor *a, *b;
  if (!pair(self, other, a, b)) return nullptr;
  return PyBool_FromLong(a->device() == Device::CPU && b->device() == Device::CPU &&
                         a->impl().storage == b->impl().storage);
}

// Whether two tensor objects hold the same engine tensor (the rebinding check
// of ctx.saved_tensors: `x._impl = y` replaces x's).
PyObject* same_handle(PyObject* self, PyObject* other) {
  if (!is_tensor(other)) {
    PyErr_SetString(PyExc_TypeError, "expected a tensor");
    return nullptr;
  }
  return PyBool_FromLong(tensor_object(self)->handle.impl_ptr() == tensor_object(other)->handle.impl_ptr());
}

// A new tensor object on the same engine tensor (what ctx.save_for_backward
// keeps to notice a rebinding later).
PyObject* handle(PyObject* self, PyObject*) { return wrap(tensor_object(self)->handle); }

PyMethodDef methods[] = {
    {"item", item, METH_NOARGS,
     "The one element as a Python bool, int or float (ValueError unless the tensor has exactly one element)."},
    {"numel", numel, METH_NOARGS, "The number of elements."},
    {"is_contiguous", is_contiguous, METH_NOARGS, "Whether the elements lie in row-major order without gaps."},
    {"_strides", strides, METH_NOARGS, "The CPU view's strides in elements, a tuple (empty on the GPU stream)."},
    {"storage_offset", storage_offset, METH_NOARGS,
     "Where this view starts in its storage, in elements (0 on the GPU stream)."},
    {"data_ptr", data_ptr, METH_NOARGS,
     "The address of the first element on the CPU stream; 0 on the GPU stream (MLX owns that memory)."},
    {"_same_meta", same_meta, METH_O, nullptr},
    {"_same_shape", same_shape, METH_O, nullptr},
    {"_same_storage", same_storage, METH_O, nullptr},
    {"_same_handle", same_handle, METH_O, nullptr},
    {"_handle", handle, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

namespace {
PyObject* leak(py::object o) { return o.release().ptr(); }
}  // namespace

std::optional<ops::ScalarKind> scalar_kind(PyObject* value) {
  if (PyFloat_CheckExact(value)) return ops::ScalarKind::Real;
  if (PyLong_CheckExact(value)) return ops::ScalarKind::Integer;
  if (PyBool_Check(value)) return ops::ScalarKind::Bool;
  if (is_tensor(value)) return std::nullopt;
  // Looked up once; never released (they live as long as the interpreter).
  static PyObject* np_bool = leak(py::module_::import("numpy").attr("bool_"));
  static PyObject* np_number = leak(py::module_::import("numpy").attr("number"));
  static PyObject* np_ndarray = leak(py::module_::import("numpy").attr("ndarray"));
  static PyObject* integral = leak(py::module_::import("numbers").attr("Integral"));
  static PyObject* real = leak(py::module_::import("numbers").attr("Real"));
  auto is = [&](PyObject* cls) {
    int r = PyObject_IsInstance(value, cls);
    if (r < 0) throw py::error_already_set();
    return r == 1;
  };
  if (is(np_ndarray)) return std::nullopt;
  if (is(np_bool)) return ops::ScalarKind::Bool;
  if (is(integral)) return ops::ScalarKind::Integer;
  if (is(real)) return ops::ScalarKind::Real;
  if (is(np_number))
    throw TypeError("expected a tensor or a real number, got " +
                    py::type::handle_of(value).attr("__name__").cast<std::string>());
  return std::nullopt;
}

std::optional<Tensor> number_as_tensor(PyObject* value, const Tensor& like) {
  std::optional<ops::ScalarKind> kind = scalar_kind(value);
  if (!kind) return std::nullopt;
  PyObject* f = PyNumber_Float(value);
  if (!f) throw py::error_already_set();
  double v = PyFloat_AS_DOUBLE(f);
  Py_DECREF(f);
  return ops::scalar_tensor(v, *kind, like);
}

PyObject* dtype_object(DType dtype) {
  PyObject* o = dtype_objects[static_cast<int>(dtype)];
  if (!o) return PyUnicode_InternFromString(dtype_name(dtype));
  Py_INCREF(o);
  return o;
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

bool is_tensor(PyObject* o) { return PyObject_TypeCheck(o, &TensorBaseType); }

const Tensor& handle_of(PyObject* o) {
  if (!is_tensor(o))
    throw TypeError(std::string("expected a tensor, got ") + Py_TYPE(o)->tp_name);
  const Tensor& h = tensor_object(o)->handle;
  if (!h.defined())
    throw ValueError(std::string(Py_TYPE(o)->tp_name) + ": " + kNoValues);
  return h;
}

const Tensor& tensor_arg(PyObject* o, const char* fn, const char* argument) {
  if (!is_tensor(o))
    throw TypeError(std::string(fn) + "(): argument '" + argument + "' must be a tensor, got " + _PyType_Name(Py_TYPE(o)));
  return handle_of(o);
}

int64_t wrap_dim(PyObject* dim, int64_t ndim, const char* fn, const char* argument) {
  // Python's int and numpy's integers; not bool, not tensors (which index too).
  if (PyBool_Check(dim) || is_tensor(dim) || !PyIndex_Check(dim))
    throw TypeError(std::string(fn) + "(): argument '" + argument + "' must be an int, got " + _PyType_Name(Py_TYPE(dim)));
  int overflow = 0;
  PyObject* index = PyNumber_Index(dim);
  if (!index) throw py::error_already_set();
  long long d = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  if (overflow || d < lo || d > hi) {
    py::object shown = py::str(py::handle(dim));
    throw IndexError(std::string(fn) + "(): argument '" + argument + "' is out of range: expected in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "], got " + shown.cast<std::string>());
  }
  return d < 0 ? d + std::max<int64_t>(ndim, 1) : d;
}

PyObject* wrap(Tensor t) {
  PyObject* o = result_class->tp_alloc(result_class, 0);
  if (o) new (&tensor_object(o)->handle) Tensor(std::move(t));
  return o;
}

void init_tensor_type(py::module_& m) {
  PyTypeObject& t = TensorBaseType;
  t.tp_name = "lucid._C.TensorBase";
  t.tp_doc = "The engine tensor and its autograd state; lucid.Tensor adds the Python methods.";
  t.tp_basicsize = sizeof(TensorObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  t.tp_new = tensor_new;
  t.tp_init = tensor_init;
  t.tp_dealloc = tensor_dealloc;
  t.tp_traverse = tensor_traverse;
  t.tp_clear = tensor_clear;
  t.tp_weaklistoffset = offsetof(TensorObject, weakrefs);
  t.tp_getset = getsets;
  t.tp_members = members;
  t.tp_methods = methods;
  t.tp_as_number = arith_number_methods();  // a + b, 2.0 * x ...: one C call (autograd/arithmetic.h)
  if (PyType_Ready(&t) < 0) throw py::error_already_set();
  Py_INCREF(&t);
  m.attr("TensorBase") = py::handle(reinterpret_cast<PyObject*>(&t));

  // lucid/_tensor.py: results become instances of `cls` (a subclass of
  // TensorBase adding no fields); `dtypes` / `devices` map engine names to
  // the objects `t.dtype` / `t.device` return.
  m.def("_register_tensor_class", [](py::type cls, py::dict dtypes, py::dict devices) {
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    bool has_dict = type->tp_dictoffset != 0;
#ifdef Py_TPFLAGS_MANAGED_DICT
    has_dict = has_dict || (type->tp_flags & Py_TPFLAGS_MANAGED_DICT);
#endif
    if (!PyType_IsSubtype(type, &TensorBaseType) || type->tp_basicsize != TensorBaseType.tp_basicsize || has_dict)
      throw TypeError("_register_tensor_class: expected a subclass of TensorBase with __slots__ = ()");
    // Every lookup before any store: a missing name leaves the registration as it was.
    std::vector<py::object> found;
    for (int i = 0; i < kNumDTypes; ++i) found.push_back(dtypes[py::str(dtype_name(static_cast<DType>(i)))]);
    for (int i = 0; i < 2; ++i) found.push_back(devices[py::str(device_name(static_cast<Device>(i)))]);
    for (int i = 0; i < kNumDTypes; ++i) dtype_objects[i] = found[i].release().ptr();
    for (int i = 0; i < 2; ++i) device_objects[i] = found[kNumDTypes + i].release().ptr();
    result_class = reinterpret_cast<PyTypeObject*>(cls.release().ptr());
  });
}

}  // namespace lucid::autograd
