// lucid.linalg.vector_norm's p-norm and its graph node; see norms.h.
#include "autograd/norms.h"

#include <pybind11/stl.h>

#include <optional>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "ops/elementwise.h"
#include "ops/reduction.h"
#include "ops/scalar.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// Numbers next to `like` as Tensor's operators coerce them (`n * 0` an
// integer, `x ** 0.5` a real: weak scalars, ops/scalar.h).

// `_PNorm.backward` with grad mode off, op for op; saved: (x, n), node.dims
// the reduced axes (None: all), params[0] keepdim, scalars[0] p.
InputGrads pnorm_backward(const CppNode& node, const Tensor& grad) {
  const Tensor& x = node.saved_handles[0];
  Tensor g = grad, n = node.saved_handles[1];
  bool keepdim = node.params[0] != 0;
  if (!keepdim && !(node.dims && node.dims->empty())) {
    g = ops::broadcast_reduced(g, node.input_shape, node.dims);
    n = ops::broadcast_reduced(n, node.input_shape, node.dims);
  }
  const double p = node.scalars[0];
  Tensor d;
  if (p == 2.0) {
    d = ops::div(x, n);
  } else if (p == 1.0) {
    d = ops::add(ops::sign(x), ops::mul(n, integer(0, n)));
  } else {
    Tensor s = ops::sign(x), ax = ops::abs(x);
    Tensor num = ops::mul(s, ops::pow(ax, real(p - 1.0, ax)));
    d = ops::div(num, ops::pow(n, real(p - 1.0, n)));
  }
  d = ops::where(ops::eq(n, integer(0, n)), real(0.0, d), d);  // PyTorch's subgradient 0 at a zero norm
  InputGrads r;
  r.grad[0] = ops::mul(g, d);
  return r;
}

NodeKind pnorm_kind = {"NormBackward", "norm", nullptr, pnorm_backward};

// `_pnorm`: the 2-norm as sqrt(sum(|x| * |x|)), any other p as
// (sum |x|^p)^(1/p), the ops lucid/_ops/norms.py ran, in its order.
Tensor pnorm_value(const Tensor& x, double p, const ops::Dims& dims, bool keepdim) {
  Tensor a = ops::abs(x);
  if (p == 2.0) return ops::sqrt(ops::sum(ops::mul(a, a), dims, keepdim, std::nullopt));
  Tensor s = ops::sum(ops::pow(a, real(p, a)), dims, keepdim, std::nullopt);
  return ops::pow(s, real(1.0 / p, s));
}

// vector_norm's finite p > 0 after its checks (lucid/_ops/norms.py): `dims`
// sorted axes in range (or None), x floating.
py::object pnorm(py::handle x, double p, std::optional<std::vector<int64_t>> dims, bool keepdim) {
  const Tensor& h = tensor_arg(x.ptr(), "vector_norm", "input");
  PyObject* o = wrap(pnorm_value(h, p, dims, keepdim));
  if (!o) throw py::error_already_set();
  py::object out = py::reinterpret_steal<py::object>(o);
  if (tensor_object(x.ptr())->requires_grad && grad_enabled()) {
    PyObject* input = x.ptr();
    PyObject* saved[2] = {input, out.ptr()};
    CppNode& n = record_node(pnorm_kind, &input, 1, saved, 2, out.ptr());
    n.dims = std::move(dims);
    n.input_shape = h.shape();
    n.params = {keepdim ? 1 : 0};
    n.scalars[0] = p;
  }
  return out;
}

}  // namespace

void init_norms(py::module_& m) {
  m.def("autograd_pnorm", &pnorm);
  // lucid/_ops/norms.py's `_PNorm`, at import: the formula under create_graph.
  m.def("_register_norm", [](py::object pnorm) { pnorm_kind.function = pnorm.release().ptr(); });
}

}  // namespace lucid::autograd
