// reshape / view recorded in C++; see shape.h.
#include "autograd/shape.h"

#include <pybind11/stl.h>

#include <string>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// `_Reshape.backward`: reshape(g, input shape), which is g itself when it has that shape.
InputGrads reshape_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  if (g.shape() == n.input_shape)
    r.pass[0] = true;
  else
    r.grad[0] = ops::reshape(g, n.input_shape);
  return r;
}

NodeKind kind = {"ReshapeBackward", "reshape", nullptr, reshape_backward};

}  // namespace

void init_shape(py::module_& m) {
  m.def("autograd_reshape", [](py::handle x, const Shape& shape, bool must_view) {
    if (!is_tensor(x.ptr()))
      throw TypeError(std::string(must_view ? "view" : "reshape") + "(): argument 'input' must be a tensor");
    const Tensor& h = handle_of(x.ptr());
    PyObject* out = wrap(must_view ? ops::view(h, shape) : ops::reshape(h, shape));
    if (!out) throw py::error_already_set();
    py::object result = py::reinterpret_steal<py::object>(out);
    if (tensor_object(x.ptr())->requires_grad && grad_enabled() && is_floating(h.dtype())) {
      PyObject* input = x.ptr();
      record_node(kind, &input, 1, nullptr, 0, out).input_shape = h.shape();
    }
    return result;
  });
  // lucid/_ops/shape.py, at import: `_Reshape`, whose recorded formula serves create_graph.
  m.def("_register_shape", [](py::object reshape) { kind.function = reshape.release().ptr(); });
}

}  // namespace lucid::autograd
