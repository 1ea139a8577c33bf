// The math family, _C.tan ... _C.nextafter (ops/math.h): one Python name per
// op, as the unary autograd node looks kernels up by name.
#include "bindings/common.h"
#include "ops/math.h"

namespace lucid::bindings {

namespace {

template <MathUnaryOp op>
void def_unary(py::module_& m, const char* name) {
  m.def(name, [name](const Tensor& x) { return ops::math_unary(op, name, x); });
}

template <MathBinaryOp op>
void def_binary(py::module_& m, const char* name) {
  m.def(name, [name](const Tensor& a, const Tensor& b) { return ops::math_binary(op, name, a, b); });
}

}  // namespace

void init_math(py::module_& m) {
  using U = MathUnaryOp;
  def_unary<U::Tan>(m, "tan");
  def_unary<U::Sinh>(m, "sinh");
  def_unary<U::Cosh>(m, "cosh");
  def_unary<U::Asin>(m, "asin");
  def_unary<U::Acos>(m, "acos");
  def_unary<U::Atan>(m, "atan");
  def_unary<U::Asinh>(m, "asinh");
  def_unary<U::Acosh>(m, "acosh");
  def_unary<U::Atanh>(m, "atanh");
  def_unary<U::Trunc>(m, "trunc");
  def_unary<U::Frac>(m, "frac");
  def_unary<U::Log10>(m, "log10");
  def_unary<U::Exp2>(m, "exp2");
  def_unary<U::Erfc>(m, "erfc");
  def_unary<U::Erfinv>(m, "erfinv");
  def_unary<U::Lgamma>(m, "lgamma");
  def_unary<U::Digamma>(m, "digamma");
  def_unary<U::Sinc>(m, "sinc");
  using P = MathPredicate;
  m.def("signbit", [](const Tensor& x) { return ops::math_predicate(P::Signbit, "signbit", x); });
  m.def("isposinf", [](const Tensor& x) { return ops::math_predicate(P::IsPosInf, "isposinf", x); });
  m.def("isneginf", [](const Tensor& x) { return ops::math_predicate(P::IsNegInf, "isneginf", x); });
  using B = MathBinaryOp;
  def_binary<B::Hypot>(m, "hypot");
  def_binary<B::LogAddExp>(m, "logaddexp");
  def_binary<B::LogAddExp2>(m, "logaddexp2");
  def_binary<B::Xlogy>(m, "xlogy");
  def_binary<B::Copysign>(m, "copysign");
  def_binary<B::Fmax>(m, "fmax");
  def_binary<B::Fmin>(m, "fmin");
  def_binary<B::Nextafter>(m, "nextafter");
}

}  // namespace lucid::bindings
