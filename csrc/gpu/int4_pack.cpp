#include "gpu/int4_pack.h"

#include "gpu/array.h"

namespace lucid::gpu {

Tensor pack_int4(const Tensor& codes, int64_t outer, int64_t len, int64_t inner, const Shape& out_shape) {
  auto s = stream();
  int o = static_cast<int>(outer), l = static_cast<int>(len), in = static_cast<int>(inner);
  // Reinterpret int8 codes as their two's complement bytes, keep the low nibble.
  mx::array c = mx::bitwise_and(mx::astype(array_of(codes), mx::uint8, s), mx::array(0x0f, mx::uint8), s);
  c = mx::reshape(c, {o, l, in}, s);
  if (l % 2) c = mx::concatenate({c, mx::zeros({o, 1, in}, mx::uint8, s)}, 1, s);
  int half = (l + 1) / 2;
  c = mx::reshape(c, {o, half, 2, in}, s);
  mx::array even = mx::slice(c, {0, 0, 0, 0}, {o, half, 1, in}, s);
  mx::array odd = mx::slice(c, {0, 0, 1, 0}, {o, half, 2, in}, s);
  mx::array b = mx::bitwise_or(even, mx::left_shift(odd, mx::array(4, mx::uint8), s), s);
  return wrap(mx::reshape(b, to_mx_shape(out_shape), s));
}

Tensor unpack_int4(const Tensor& packed, int64_t outer, int64_t len, int64_t inner, DType out,
                   const Shape& out_shape) {
  auto s = stream();
  int o = static_cast<int>(outer), l = static_cast<int>(len), in = static_cast<int>(inner);
  int half = (l + 1) / 2;
  mx::array p = mx::reshape(array_of(packed), {o, half, 1, in}, s);
  mx::array lo = mx::bitwise_and(p, mx::array(0x0f, mx::uint8), s);
  mx::array hi = mx::right_shift(p, mx::array(4, mx::uint8), s);
  mx::array n = mx::reshape(mx::concatenate({lo, hi}, 2, s), {o, 2 * half, in}, s);
  n = mx::slice(n, {0, 0, 0}, {o, l, in}, s);
  if (out == DType::Int8) {  // sign-extend the nibble: (n ^ 8) - 8
    mx::array w = mx::bitwise_xor(mx::astype(n, mx::int16, s), mx::array(8, mx::int16), s);
    n = mx::astype(mx::subtract(w, mx::array(8, mx::int16), s), mx::int8, s);
  }
  return wrap(mx::reshape(n, to_mx_shape(out_shape), s));
}

}  // namespace lucid::gpu
