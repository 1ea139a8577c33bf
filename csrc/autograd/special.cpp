// polygamma and lucid.special.ndtri with their graph nodes; see special.h.
#include "autograd/special.h"

#include <pybind11/stl.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/elementwise.h"
#include "ops/math.h"
#include "ops/scalar.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// Numbers next to `like` as lucid's ops coerce them (`E.add(y, float(k))` a
// real, `E.pow(t, s)` with an int s an integer: weak scalars, ops/scalar.h).

// ----- polygamma: lucid/_ops/gamma.py's `polygamma`, op for op -----------

// What the composition of order n reads that only exact arithmetic gives
// (Python's Fractions and big ints, rounded once to double there): the ten
// Euler-Maclaurin coefficients B_2j (s)_(2j-1) / (2j)! for s = n + 1, the
// scale (-1)^(n+1) n!, and the coefficients of P_n (lowest power first).
struct PolygammaPlan {
  std::vector<double> bernoulli;
  double scale;
  std::vector<double> poly;
};
std::map<int64_t, PolygammaPlan> plans;  // by n, filled by `_C._polygamma_plan` (under the GIL)

const PolygammaPlan& plan_for(int64_t n) {
  auto it = plans.find(n);
  if (it == plans.end())
    throw RuntimeError("polygamma: no plan registered for order " + std::to_string(n) +
                       " (lucid/_ops/gamma.py registers them before each call)");
  return it->second;
}

Tensor tan(const Tensor& x) { return ops::math_unary(MathUnaryOp::Tan, "tan", x); }
Tensor reciprocal(const Tensor& x) { return ops::div(real(1.0, x), x); }

// `_hurwitz_zeta(s, y)`: the first 10 + s terms of sum_k (y + k)^-s, the rest
// by Euler-Maclaurin at z = y + 10 + s.
Tensor hurwitz_zeta(int64_t s, const Tensor& y, const std::vector<double>& bernoulli) {
  const int64_t shift = 10 + s;
  Tensor total;
  for (int64_t k = 0; k < shift; ++k) {
    Tensor r = reciprocal(ops::add(y, real(static_cast<double>(k), y)));
    Tensor term = ops::pow(r, integer(static_cast<double>(s), r));
    total = k == 0 ? term : ops::add(total, term);
  }
  Tensor t = reciprocal(ops::add(y, real(static_cast<double>(shift), y)));
  Tensor lead = ops::pow(t, integer(static_cast<double>(s - 1), t));
  Tensor half = ops::pow(t, integer(static_cast<double>(s), t));
  Tensor tail = ops::add(ops::mul(lead, real(1.0 / static_cast<double>(s - 1), lead)), ops::mul(half, real(0.5, half)));
  Tensor t2 = ops::mul(t, t);
  Tensor power = ops::pow(t, integer(static_cast<double>(s + 1), t));  // z^(1 - s - 2j) at j = 1
  for (size_t j = 0; j < bernoulli.size(); ++j) {
    tail = ops::add(tail, ops::mul(power, real(bernoulli[j], power)));
    if (j + 1 < bernoulli.size()) power = ops::mul(power, t2);
  }
  return ops::add(total, tail);
}

// `_cot_pi(x)`: cot(pi x) reduced exactly to a tangent of an argument in [0, pi/4].
Tensor cot_pi(const Tensor& x) {
  Tensor r = ops::sub(x, ops::floor(x));
  Tensor upper = ops::gt(r, real(0.5, r));
  Tensor s = ops::where(upper, ops::sub(real(1.0, r), r), r);
  Tensor above = ops::gt(s, real(0.25, s));
  Tensor d = ops::sub(real(0.5, s), s);
  Tensor near = tan(ops::mul(d, real(kPi, d)));
  Tensor far = reciprocal(tan(ops::mul(s, real(kPi, s))));
  Tensor c = ops::where(above, near, far);
  return ops::where(upper, ops::neg(c), c);
}

// `_polygamma_values(n, x)`: digamma for n = 0; else (-1)^(n+1) n! zeta(n+1, y)
// with y = x, or 1 - x and the reflection below 1/2; (-1)^(n+1) inf at the poles.
Tensor polygamma_values(int64_t n, const Tensor& x) {
  if (n == 0) return ops::math_unary(MathUnaryOp::Digamma, "digamma", x);
  const PolygammaPlan& plan = plan_for(n);
  const double sign = n % 2 == 0 ? -1.0 : 1.0;
  Tensor reflect = ops::lt(x, real(0.5, x));
  Tensor y = ops::where(reflect, ops::sub(real(1.0, x), x), x);
  Tensor zeta = hurwitz_zeta(n + 1, y, plan.bernoulli);
  Tensor psi_y = ops::mul(zeta, real(plan.scale, zeta));
  Tensor c = cot_pi(x);
  const std::vector<double>& co = plan.poly;
  Tensor poly = ops::mul(c, real(co[co.size() - 1], c));
  poly = ops::add(poly, real(co[co.size() - 2], poly));
  for (size_t i = co.size() - 2; i-- > 0;) {  // Horner
    Tensor m = ops::mul(poly, c);
    poly = ops::add(m, real(co[i], m));
  }
  Tensor turned = ops::mul(psi_y, real(std::pow(-1.0, static_cast<double>(n)), psi_y));
  Tensor bent = ops::mul(poly, real(std::pow(kPi, static_cast<double>(n + 1)), poly));
  Tensor reflected = ops::sub(turned, bent);
  Tensor out = ops::where(reflect, reflected, psi_y);
  Tensor pole = ops::logical_and(ops::le(x, real(0.0, x)), ops::eq(x, ops::floor(x)));
  return ops::where(pole, real(sign * INFINITY, out), out);
}

// `_Polygamma.backward` with grad mode off: g * polygamma(n + 1, x); saved:
// (x,), params[0] n.
InputGrads polygamma_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::mul(g, polygamma_values(n.params[0] + 1, n.saved_handles[0]));
  return r;
}

NodeKind polygamma_kind = {"PolygammaBackward", "polygamma", nullptr, polygamma_backward};

// polygamma(n, x) after lucid's checks (n a non-negative int, x floating; the
// plans of n and n + 1 registered): the values, and PolygammaBackward when x
// requires grad and grad mode is on.
py::object polygamma_entry(py::handle x, int64_t n) {
  const Tensor& h = tensor_arg(x.ptr(), "polygamma", "input");
  if (n < 0) throw ValueError("polygamma: argument 'n' must be a non-negative int");
  PyObject* o = wrap(polygamma_values(n, h));
  if (!o) throw py::error_already_set();
  py::object out = py::reinterpret_steal<py::object>(o);
  if (tensor_object(x.ptr())->requires_grad && grad_enabled()) {
    plan_for(n + 1);  // the first-order formula's, checked now rather than in backward
    PyObject* input = x.ptr();
    record_node(polygamma_kind, &input, 1, &input, 1, out.ptr()).params = {n};
  }
  return out;
}

// ----- ndtri ------------------------------------------------------------------------

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

NodeKind ndtri_kind = {"NdtriBackward", "ndtri", nullptr, ndtri_backward};

// z = ndtri(p), computed by the caller without recording: records the node
// when p requires grad and grad mode is on; returns z.
py::object ndtri(py::handle p, py::handle z) {
  const Tensor& hp = tensor_arg(p.ptr(), "special.ndtri", "input");
  const Tensor& hz = tensor_arg(z.ptr(), "special.ndtri", "values");
  if (hp.shape() != hz.shape()) throw ValueError("special.ndtri: the values must have the input's shape");
  py::object out = py::reinterpret_borrow<py::object>(z);
  if (tensor_object(p.ptr())->requires_grad && grad_enabled() && is_floating(hz.dtype())) {
    if (tensor_object(z.ptr())->grad_fn)
      throw ValueError("special.ndtri: the values must be computed without recording");
    PyObject* input = p.ptr();
    PyObject* saved[2] = {input, z.ptr()};
    record_node(ndtri_kind, &input, 1, saved, 2, z.ptr());
  }
  return out;
}

}  // namespace

Tensor polygamma(int64_t n, const Tensor& x) { return polygamma_values(n, x); }

void init_special_autograd(py::module_& m) {
  m.def("autograd_polygamma", &polygamma_entry);
  m.def("_polygamma_plan", [](int64_t n, std::vector<double> bernoulli, double scale, std::vector<double> poly) {
    if (n < 1 || poly.size() < 2) throw ValueError("_polygamma_plan: expected an order n >= 1 and P_n's coefficients");
    plans[n] = PolygammaPlan{std::move(bernoulli), scale, std::move(poly)};
  });
  // lucid/_ops/gamma.py's `_Polygamma`, at import: the formula under create_graph.
  m.def("_register_polygamma", [](py::object f) { polygamma_kind.function = f.release().ptr(); });
  m.def("autograd_ndtri", &ndtri);
  // lucid/special.py's `_Ndtri`, at import: the formula under create_graph.
  m.def("_register_ndtri", [](py::object ndtri) { ndtri_kind.function = ndtri.release().ptr(); });
}

}  // namespace lucid::autograd
