// The Python tensor object (issue 11: "the user-facing Tensor is the C++
// tensor"). `lucid._C.TensorBase` is a C type whose instances hold the engine
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

#include "core/tensor.h"

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

// Whether `o` is a tensor (an instance of TensorBase or a subclass).
bool is_tensor(PyObject* o);
// The engine tensor of a tensor object; ValueError when it holds none.
const Tensor& handle_of(PyObject* o);
// A new reference: a fresh tensor object of the registered Python class
// (`lucid.Tensor`), holding `t`, requiring no grad.
PyObject* wrap(Tensor t);

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
