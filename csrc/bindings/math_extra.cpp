// _C.tan ... _C.nextafter and _C.bitwise_*: one Python name per op, as the
// unary autograd node looks kernels up by name (python/lucid/_ops/math_extra.py).
#include "bindings/common.h"
#include "ops/bitwise.h"
#include "ops/math_extra.h"

namespace lucid::bindings {

namespace {

template <cpu::MathUnaryOp op>
void def_unary(py::module_& m, const char* name) {
  m.def(name, [name](const Tensor& x) { return ops::math_unary(op, name, x); });
}

template <cpu::MathBinaryOp op>
void def_binary(py::module_& m, const char* name) {
  m.def(name, [name](const Tensor& a, const Tensor& b) { return ops::math_binary(op, name, a, b); });
}

template <cpu::BitwiseOp op>
void def_bitwise(py::module_& m, const char* name) {
  m.def(name, [name](const Tensor& a, const Tensor& b) { return ops::bitwise_binary(op, name, a, b); });
}

}  // namespace

void init_math_extra(py::module_& m) {
  using U = cpu::MathUnaryOp;
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
  using P = cpu::MathPredicate;
  m.def("signbit", [](const Tensor& x) { return ops::math_predicate(P::Signbit, "signbit", x); });
  m.def("isposinf", [](const Tensor& x) { return ops::math_predicate(P::IsPosInf, "isposinf", x); });
  m.def("isneginf", [](const Tensor& x) { return ops::math_predicate(P::IsNegInf, "isneginf", x); });
  using B = cpu::MathBinaryOp;
  def_binary<B::Hypot>(m, "hypot");
  def_binary<B::LogAddExp>(m, "logaddexp");
  def_binary<B::LogAddExp2>(m, "logaddexp2");
  def_binary<B::Xlogy>(m, "xlogy");
  def_binary<B::Copysign>(m, "copysign");
  def_binary<B::Fmax>(m, "fmax");
  def_binary<B::Fmin>(m, "fmin");
  def_binary<B::Nextafter>(m, "nextafter");
  using W = cpu::BitwiseOp;
  def_bitwise<W::And>(m, "bitwise_and");
  def_bitwise<W::Or>(m, "bitwise_or");
  def_bitwise<W::Xor>(m, "bitwise_xor");
  def_bitwise<W::LeftShift>(m, "bitwise_left_shift");
  def_bitwise<W::RightShift>(m, "bitwise_right_shift");
  m.def("bitwise_not", &ops::bitwise_not);
}

}  // namespace lucid::bindings
