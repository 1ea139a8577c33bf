// CPU-stream bitwise and / or / xor / not and shifts (contracts: cpu/bitwise.h).
#include "cpu/bitwise.h"

#include <type_traits>

#include "core/dispatch.h"

namespace lucid::cpu {

namespace {

template <class T>
bool out_of_range(T b) {
  constexpr int64_t bits = 8 * sizeof(T);
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) return true;
  }
  return static_cast<int64_t>(b) >= bits;
}

template <class T>
bool negative(T a) {
  if constexpr (std::is_signed_v<T>) return a < 0;
  return false;
}

template <class T>
T shift_left(T a, T b) {
  if (out_of_range(b)) return T(0);
  using U = std::make_unsigned_t<T>;  // shift the bit pattern: no signed overflow
  return static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<int>(b)));
}

template <class T>
T shift_right(T a, T b) {
  if (out_of_range(b)) return negative(a) ? T(-1) : T(0);
  return static_cast<T>(a >> static_cast<int>(b));  // arithmetic for signed types
}

}  // namespace

void bitwise_binary(BitwiseOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_integral_v<T>) {
      throw TypeError("internal: bitwise op on a floating dtype");
    } else {
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* o = out.data<T>();
      int64_t n = out.numel();
      switch (op) {
        case BitwiseOp::And: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(pa[i] & pb[i]); return;
        case BitwiseOp::Or: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(pa[i] | pb[i]); return;
        case BitwiseOp::Xor: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(pa[i] ^ pb[i]); return;
        case BitwiseOp::LeftShift:
        case BitwiseOp::RightShift:
          if constexpr (std::is_same_v<T, bool>) {
            throw TypeError("internal: shift of a bool tensor");
          } else {
            for (int64_t i = 0; i < n; ++i)
              o[i] = op == BitwiseOp::LeftShift ? shift_left<T>(pa[i], pb[i]) : shift_right<T>(pa[i], pb[i]);
          }
          return;
      }
    }
  });
}

void bitwise_not(const Tensor& x, const Tensor& out) {
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_integral_v<T>) {
      throw TypeError("internal: bitwise_not on a floating dtype");
    } else {
      const T* in = x.data<T>();
      T* o = out.data<T>();
      for (int64_t i = 0, n = out.numel(); i < n; ++i) {
        if constexpr (std::is_same_v<T, bool>) o[i] = !in[i];
        else o[i] = static_cast<T>(~in[i]);
      }
    }
  });
}

}  // namespace lucid::cpu
