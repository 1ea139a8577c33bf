// GPU-stream bitwise and / or / xor / not and shifts (MLX).
#include "gpu/bitwise.h"

#include "gpu/array.h"

namespace lucid::gpu {

Tensor bitwise_binary(BitwiseOp op, const Tensor& a, const Tensor& b) {
  auto s = stream();
  mx::array x = array_of(a);
  mx::array y = array_of(b);
  mx::Dtype dt = x.dtype();
  bool is_bool = dt == mx::bool_;
  switch (op) {
    case BitwiseOp::And: return wrap(is_bool ? mx::logical_and(x, y, s) : mx::bitwise_and(x, y, s));
    case BitwiseOp::Or: return wrap(is_bool ? mx::logical_or(x, y, s) : mx::bitwise_or(x, y, s));
    case BitwiseOp::Xor: return wrap(is_bool ? mx::not_equal(x, y, s) : mx::bitwise_xor(x, y, s));
    case BitwiseOp::LeftShift:
    case BitwiseOp::RightShift: break;
  }
  // Counts outside [0, bits) are undefined for the C shift MLX runs: replace
  // them by 0 and select PyTorch's result for them afterwards.
  mx::array zero = mx::array(0, dt);
  mx::array valid = mx::logical_and(mx::greater_equal(y, zero, s),
                                    mx::less(y, mx::array(static_cast<int>(8 * dt.size()), dt), s), s);
  mx::array count = mx::where(valid, y, zero, s);
  if (op == BitwiseOp::LeftShift) return wrap(mx::where(valid, mx::left_shift(x, count, s), zero, s));
  mx::array fill = mx::where(mx::less(x, zero, s), mx::array(-1, dt), zero, s);
  return wrap(mx::where(valid, mx::right_shift(x, count, s), fill, s));
}

Tensor bitwise_not(const Tensor& x) {
  auto s = stream();
  const mx::array& a = array_of(x);
  return wrap(a.dtype() == mx::bool_ ? mx::logical_not(a, s) : mx::bitwise_invert(a, s));
}

}  // namespace lucid::gpu
