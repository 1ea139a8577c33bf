// The Python tensor object: the user-facing Tensor is the C++ tensor.
// `lucid._C.TensorBase` is a C type whose instances hold the engine
// handle (`lucid::Tensor`) and the autograd state next to it: requires_grad,
// grad, grad_fn, the output number within grad_fn, retain_grad. `lucid.Tensor`
// is a Python subclass of it (`__slots__ = ()`) that adds the methods written
// in Python, and every `_C` function that returns a tensor returns an instance
// of that subclass, built here, so an op's result needs no Python wrapper.
//
// Why a plain C type and not `py::class_<Tensor>`: an instance is one
// allocation with its fields at fixed offsets, read by member descriptors as
// fast as Python slots, and making one skips pybind11's registry of live
// instances. The bindings still take and return `lucid::Tensor`: the
// type_caster at the end of this file converts.
//
// This layer sits beside the backward walk (autograd/engine.cpp), above `ops`
// and below `bindings`.
#pragma once
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <utility>

#include "core/tensor.h"
#include "ops/scalar.h"

namespace lucid::autograd {

namespace py = pybind11;

struct TensorObject {
  PyObject_HEAD
  // The engine tensor. Empty only for a lazy module's placeholder parameter
  // (nn.UninitializedParameter), which never reaches `_C` with it.
  Tensor handle;
  PyObject* grad;      // NULL reads as None
  PyObject* grad_fn;   // NULL reads as None
  PyObject* weakrefs;
  Py_ssize_t output_nr;
  char requires_grad;
  char retain_grad;
};

inline TensorObject* tensor_object(PyObject* o) { return reinterpret_cast<TensorObject*>(o); }
// The object `t.dtype` returns for `dtype` (a new reference): the lucid.dtype,
// or its name before lucid/_tensor.py registered them.
PyObject* dtype_object(DType dtype);
// "(2, 3)", "(8,)", "()": a shape as Python prints a tuple.
std::string shape_str(const Shape& shape);

// Whether `o` is a tensor (an instance of TensorBase or a subclass).
bool is_tensor(PyObject* o);
// The engine tensor of a tensor object; TypeError for another object,
// ValueError when it holds none.
const Tensor& handle_of(PyObject* o);
// The engine tensor of argument `argument` of `fn` (an op entry point in
// csrc/autograd/): TypeError "fn(): argument 'x' must be a tensor, got T" for
// another object, ValueError when it holds none.
const Tensor& tensor_arg(PyObject* o, const char* fn, const char* argument);
// Argument `argument` of `fn`, an axis of a tensor with `ndim` axes, wrapped
// to [0, ndim) as lucid._ops.common.wrap_dim does (a 0-d tensor takes 0 and
// -1): TypeError for a non-int (bool included), IndexError out of range, with
// wrap_dim's messages.
int64_t wrap_dim(PyObject* dim, int64_t ndim, const char* fn, const char* argument = "dim");
// A new reference: a fresh tensor object of the registered Python class
// (`lucid.Tensor`), holding `t`, requiring no grad.
PyObject* wrap(Tensor t);

// What kind of Python number `value` is, by the tests (and in the order) of
// Python's numbers ABCs: exact int / float first, so the common case costs two
// pointer compares; then numpy's bool, numbers.Integral, numbers.Real. Empty
// when `value` is no real number (lists, arrays, a 0-d numpy array, tensors:
// the caller's). A numpy number that is not real (complex) raises TypeError.
std::optional<ops::ScalarKind> scalar_kind(PyObject* value);
// `value` as a 0-d tensor next to `like` (ops::scalar_tensor: PyTorch's weak
// scalar dtype), or empty when it is no real number. float(value) raises
// OverflowError for a huge int, as Python does.
std::optional<Tensor> number_as_tensor(PyObject* value, const Tensor& like);

// `o`, a new reference, as an owned object; error_already_set when it is
// null (the Python error is set).
inline py::object steal(PyObject* o) {
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(o);
}
// `t` as a new tensor object (wrap), owned.
inline py::object wrapped(Tensor t) { return steal(wrap(std::move(t))); }

// Readies TensorBase and adds it, and `_register_tensor_class`, to `m`.
void init_tensor_type(py::module_& m);

}  // namespace lucid::autograd

namespace pybind11::detail {

// `lucid::Tensor` arguments take the handle of a tensor object (a copy of the
// shared handle, so `const Tensor&` and `Tensor&` parameters see the same
// engine tensor); results become new tensor objects.
template <>
struct type_caster<lucid::Tensor> {
  PYBIND11_TYPE_CASTER(lucid::Tensor, const_name("lucid.Tensor"));

  bool load(handle src, bool /*convert*/) {
    if (!lucid::autograd::is_tensor(src.ptr())) return false;
    value = lucid::autograd::handle_of(src.ptr());
    return true;
  }

  static handle cast(const lucid::Tensor& src, return_value_policy /*policy*/, handle /*parent*/) {
    PyObject* o = lucid::autograd::wrap(src);
    if (!o) throw error_already_set();
    return o;
  }
};

}  // namespace pybind11::detail
