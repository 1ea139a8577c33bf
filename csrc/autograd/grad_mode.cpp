// See grad_mode.h.
#include "autograd/grad_mode.h"

namespace lucid::autograd {

namespace {

thread_local bool enabled = true;

PyObject* is_grad_enabled(PyObject*, PyObject*) { return PyBool_FromLong(enabled); }

// set_grad_enabled(mode) -> the previous mode (what `with no_grad()` restores).
PyObject* set_grad_enabled_py(PyObject*, PyObject* mode) {
  int on = PyObject_IsTrue(mode);
  if (on < 0) return nullptr;
  bool previous = enabled;
  enabled = on != 0;
  return PyBool_FromLong(previous);
}

PyMethodDef defs[] = {
    {"is_grad_enabled", is_grad_enabled, METH_NOARGS, "Whether ops record the graph in this thread."},
    {"set_grad_enabled", set_grad_enabled_py, METH_O,
     "Sets this thread's grad mode; returns the previous one."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool grad_enabled() { return enabled; }
void set_grad_enabled(bool on) { enabled = on; }

void init_grad_mode(pybind11::module_& m) {
  for (PyMethodDef* d = defs; d->ml_name; ++d) {
    PyObject* f = PyCFunction_NewEx(d, nullptr, m.attr("__name__").ptr());
    if (!f) throw pybind11::error_already_set();
    m.attr(d->ml_name) = pybind11::reinterpret_steal<pybind11::object>(f);
  }
}

}  // namespace lucid::autograd
