#include "gpu/elementwise.h"

#include "core/errors.h"
#include "gpu/array.h"

namespace lucid::gpu {

Tensor unary(UnaryOp op, const Tensor& x) {
  const mx::array& a = array_of(x);
  auto s = stream();
  switch (op) {
    case UnaryOp::Neg: return wrap(mx::negative(a, s));
    case UnaryOp::Exp: return wrap(mx::exp(a, s));
  }
  throw RuntimeError("internal: unknown unary op");
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, DType out_dtype) {
  auto s = stream();
  mx::Dtype dt = to_mx(out_dtype);
  mx::array x = mx::astype(array_of(a), dt, s);
  mx::array y = mx::astype(array_of(b), dt, s);
  switch (op) {
    case BinaryOp::Add: return wrap(mx::add(x, y, s));
    case BinaryOp::Sub: return wrap(mx::subtract(x, y, s));
    case BinaryOp::Mul: return wrap(mx::multiply(x, y, s));
    case BinaryOp::Div: return wrap(mx::divide(x, y, s));
  }
  throw RuntimeError("internal: unknown binary op");
}

}  // namespace lucid::gpu
