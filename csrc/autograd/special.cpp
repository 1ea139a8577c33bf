// lucid.special.ndtri's graph node; see special.h.
#include "autograd/special.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/elementwise.h"
#include "ops/scalar.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

Tensor real(double v, const Tensor& like) { return ops::scalar_tensor(v, ops::ScalarKind::Real, like); }

// `_Ndtri.backward` with grad mode off, op for op: 1 / pdf(z) = exp(z^2 / 2 +
// ln(2 pi) / 2), times g; saved: (p, z), z the output.
InputGrads ndtri_backward(const CppNode& n, const Tensor& g) {
  const Tensor& z = n.saved_handles[1];
  const double half_log_2pi = 0.5 * std::log(2.0 * 3.14159265358979323846);  // special.py's _HALF_LOG_2PI
  Tensor zz = ops::mul(z, z);
  Tensor half = ops::mul(zz, real(0.5, zz));
  Tensor e = ops::exp(ops::add(half, real(half_log_2pi, half)));
  InputGrads r;
  r.grad[0] = ops::mul(g, e);
  return r;
}

NodeKind kind = {"NdtriBackward", "ndtri", nullptr, ndtri_backward};

// z = ndtri(p), computed by the caller without recording: records the node
// when p requires grad and grad mode is on; returns z.
py::object ndtri(py::handle p, py::handle z) {
  const Tensor& hp = tensor_arg(p.ptr(), "special.ndtri", "input");
  const Tensor& hz = tensor_arg(z.ptr(), "special.ndtri", "values");
  if (hp.shape() != hz.shape()) throw ValueError("special.ndtri: the values must have the input's shape");
  py::object out = py::reinterpret_borrow<py::object>(z);
  if (tensor_object(p.ptr())->requires_grad && grad_enabled() && is_floating(hz.dtype())) {
    if (tensor_object(z.ptr())->grad_fn) throw ValueError("special.ndtri: the values must be computed without recording");
    PyObject* input = p.ptr();
    PyObject* saved[2] = {input, z.ptr()};
    record_node(kind, &input, 1, saved, 2, z.ptr());
  }
  return out;
}

}  // namespace

void init_special_autograd(py::module_& m) {
  m.def("autograd_ndtri", &ndtri);
  // lucid/special.py's `_Ndtri`, at import: the formula under create_graph.
  m.def("_register_ndtri", [](py::object ndtri) { kind.function = ndtri.release().ptr(); });
}

}  // namespace lucid::autograd
