// The bitwise family, _C.bitwise_and ... _C.bitwise_not (ops/bitwise.h).
#include "bindings/common.h"
#include "ops/bitwise.h"

namespace lucid::bindings {

namespace {

template <BitwiseOp op>
void def_bitwise(py::module_& m, const char* name) {
  m.def(name, [name](const Tensor& a, const Tensor& b) { return ops::bitwise_binary(op, name, a, b); });
}

}  // namespace

void init_bitwise(py::module_& m) {
  using W = BitwiseOp;
  def_bitwise<W::And>(m, "bitwise_and");
  def_bitwise<W::Or>(m, "bitwise_or");
  def_bitwise<W::Xor>(m, "bitwise_xor");
  def_bitwise<W::LeftShift>(m, "bitwise_left_shift");
  def_bitwise<W::RightShift>(m, "bitwise_right_shift");
  m.def("bitwise_not", &ops::bitwise_not);
}

}  // namespace lucid::bindings
