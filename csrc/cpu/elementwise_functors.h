// Scalar definitions of every elementwise op, one functor each, evaluated in
// the compute type C (float for float16/bfloat16, the type itself otherwise).
// The loops in cpu/elementwise*.cpp apply them as `out[i] = f(x[i])`, so a
// functor must stay branch-light for the compiler to vectorize the loop.
//
// Integer arithmetic goes through unsigned types: signed overflow is
// undefined in C++, unsigned wraps, and the conversion back is modular
// (C++20), which gives two's-complement wrap-around like numpy and MLX.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cpu/elementwise_math.h"

namespace lucid::cpu::fn {

// An unsigned type at least 32 bits wide, so uint16 * uint16 cannot promote
// to (signed, overflowing) int.
template <class T>
using wide_unsigned_t = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

template <class T>
constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// ----- unary, numeric -------------------------------------------------------
struct Neg {
  template <class C> C operator()(C x) const {
    if constexpr (is_int_v<C>) return static_cast<C>(wide_unsigned_t<C>(0) - static_cast<wide_unsigned_t<C>>(x));
    else return -x;
  }
};
struct Abs {
  template <class C> C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) return x;
    else if constexpr (is_int_v<C>) return x < 0 ? Neg{}(x) : x;  // abs(INT_MIN) wraps to INT_MIN
    else return std::fabs(x);
  }
};
struct Sign {  // NaN stays NaN (numpy); -0 and +0 give +0
  template <class C> C operator()(C x) const {
    C s = static_cast<C>((C(0) < x) - (x < C(0)));
    if constexpr (is_int_v<C>) return s;
    else return x != x ? x : s;
  }
};
struct Relu {  // relu(NaN) = NaN, relu(-0) = +0
  template <class C> C operator()(C x) const { return !(x <= C(0)) ? x : C(0); }
};

// ----- unary, floating --------------------------------------------------------
struct Exp {
  template <class C> C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) return fast::exp_f32(x);
    else return std::exp(x);
  }
};
struct Log {
  template <class C> C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) return fast::log_f32(x);
    else return std::log(x);
  }
};
struct Sqrt { template <class C> C operator()(C x) const { return std::sqrt(x); } };
struct Rsqrt { template <class C> C operator()(C x) const { return C(1) / std::sqrt(x); } };
// sin / cos: float32 has a vectorized path for |x| <= fast::kTrigFastBound and
// libm (in double, then rounded) for the rest, which includes inf and NaN.
// The contiguous loop (map1_with_fallback) uses the three parts separately so
// the rare slow lanes do not stop the common ones from vectorizing; operator()
// is the same function for one element.
struct Sin {
  static float fast(float x) { return fast::sin_fast_f32(x); }
  static float exact(float x) { return static_cast<float>(std::sin(static_cast<double>(x))); }
  static bool in_fast_range(float x) { return fast::trig_in_fast_range(x); }
  template <class C> C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) return in_fast_range(x) ? fast(x) : exact(x);
    else return std::sin(x);
  }
};
struct Cos {
  static float fast(float x) { return fast::cos_fast_f32(x); }
  static float exact(float x) { return static_cast<float>(std::cos(static_cast<double>(x))); }
  static bool in_fast_range(float x) { return fast::trig_in_fast_range(x); }
  template <class C> C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) return in_fast_range(x) ? fast(x) : exact(x);
    else return std::cos(x);
  }
};
struct Tanh {
  template <class C> C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) return fast::tanh_f32(x);
    else return std::tanh(x);
  }
};
struct Erf { template <class C> C operator()(C x) const { return std::erf(x); } };
// 1 / (1 + e^-x): exact limits at both ends (e^-x overflows to inf -> 0).
struct Sigmoid {
  template <class C> C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) return fast::sigmoid_f32(x);
    else return C(1) / (C(1) + std::exp(-x));
  }
};
// x * Phi(x), Phi the standard normal CDF written with erf.
struct Gelu {
  template <class C> C operator()(C x) const {
    return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440)));
  }
};
// The tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
struct GeluTanh {
  template <class C> C operator()(C x) const {
    C inner = C(0.79788456080286535588) * (x + C(0.044715) * x * x * x);
    return C(0.5) * x * (C(1) + Tanh{}(inner));
  }
};
struct Floor { template <class C> C operator()(C x) const { return std::floor(x); } };
struct Ceil { template <class C> C operator()(C x) const { return std::ceil(x); } };
// nearbyint rounds half to even in the default rounding mode (roundps on x86).
struct Round { template <class C> C operator()(C x) const { return std::nearbyint(x); } };

// ----- predicates (floating input, bool output) ---------------------------------
struct IsNan { template <class C> bool operator()(C x) const { return x != x; } };
struct IsInf {
  template <class C> bool operator()(C x) const { return std::fabs(x) == std::numeric_limits<C>::infinity(); }
};
struct IsFinite {
  template <class C> bool operator()(C x) const { return std::fabs(x) < std::numeric_limits<C>::infinity(); }
};

// ----- binary ------------------------------------------------------------------
struct Add {
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) { using W = wide_unsigned_t<C>; return static_cast<C>(W(a) + W(b)); }
    else return a + b;
  }
};
struct Sub {
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) { using W = wide_unsigned_t<C>; return static_cast<C>(W(a) - W(b)); }
    else return a - b;
  }
};
struct Mul {
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) { using W = wide_unsigned_t<C>; return static_cast<C>(W(a) * W(b)); }
    else return a * b;
  }
};
struct Div { template <class C> C operator()(C a, C b) const { return a / b; } };  // floating only

// Integer powers wrap like repeated multiplication. A negative exponent gives
// the truncated value of 1 / a^|b|: 1 for a == 1, +-1 for a == -1, else 0.
struct Pow {
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) {
      using W = wide_unsigned_t<C>;
      if constexpr (std::is_signed_v<C>) {
        if (b < 0) return a == 1 ? C(1) : a == C(-1) ? ((b & 1) ? C(-1) : C(1)) : C(0);
      }
      W result = 1, base = W(a);
      for (auto e = static_cast<std::make_unsigned_t<C>>(b); e; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return static_cast<C>(result);
    } else {
      // The exponents of x ** 2 (a loss's square), its gradient's x ** 1 and x ** 0
      // skip the libm call (15 ns an element): x * x is the correctly rounded square
      // (powf may misround the rare exact midpoint), x ** 1 is x and x ** 0 is 1 for
      // every x, NaN included, as C's pow defines them.
      if (b == C(2)) return a * a;
      if (b == C(1)) return a;
      if (b == C(0)) return C(1);
      return std::pow(a, b);
    }
  }
};
// Integer division by zero never reaches these (ops/ raises first); b == -1
// is taken apart because INT_MIN / -1 overflows in C++, and the result wraps.
// Floats follow docs/numerics.md "Floor division and remainder": the floor
// quotient is (a - fmod(a, b)) / b corrected by one, which is exact where
// floor(a / b) is not (1 // 0.1 is 9, not 10).
struct Fmod {
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) {
      if constexpr (std::is_signed_v<C>) { if (b == C(-1)) return C(0); }
      return static_cast<C>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};
struct Remainder {
  template <class C> C operator()(C a, C b) const {
    C r = Fmod{}(a, b);
    if constexpr (std::is_unsigned_v<C>) return r;
    else return (r != C(0) && ((r < C(0)) != (b < C(0)))) ? static_cast<C>(r + b) : r;
  }
};
struct FloorDivide {
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) {
      if constexpr (std::is_signed_v<C>) {
        using W = wide_unsigned_t<C>;
        if (b == C(-1)) return static_cast<C>(W(0) - W(a));  // wraps for the minimum
        C q = static_cast<C>(a / b);
        return (a % b != 0 && ((a < C(0)) != (b < C(0)))) ? static_cast<C>(q - 1) : q;
      } else {
        return static_cast<C>(a / b);
      }
    } else {
      if (b == C(0)) return a / b;  // +-inf or NaN, as in IEEE division
      C mod = std::fmod(a, b);
      C div = (a - mod) / b;
      if (mod != C(0) && ((b < C(0)) != (mod < C(0)))) div = div - C(1);
      if (div == C(0)) return std::copysign(C(0), a / b);
      C fl = std::floor(div);
      return (div - fl > C(0.5)) ? static_cast<C>(fl + C(1)) : fl;
    }
  }
};

// NaN in either input propagates (PyTorch). Otherwise the larger value; on a
// tie (+0 vs -0) the second argument wins, as in MLX, so the streams agree bit
// for bit.
struct Maximum {
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) return a > b ? a : b;
    else return (a != a) ? a : (b != b) ? b : (a > b ? a : b);
  }
};
struct Minimum {
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) return a < b ? a : b;
    else return (a != a) ? a : (b != b) ? b : (a < b ? a : b);
  }
};

// ----- comparisons (bool output) -------------------------------------------------
struct Eq { template <class C> bool operator()(C a, C b) const { return a == b; } };
struct Ne { template <class C> bool operator()(C a, C b) const { return a != b; } };
struct Lt { template <class C> bool operator()(C a, C b) const { return a < b; } };
struct Le { template <class C> bool operator()(C a, C b) const { return a <= b; } };
struct Gt { template <class C> bool operator()(C a, C b) const { return a > b; } };
struct Ge { template <class C> bool operator()(C a, C b) const { return a >= b; } };
struct LogicalAnd { template <class C> bool operator()(C a, C b) const { return (a != C(0)) & (b != C(0)); } };
struct LogicalOr { template <class C> bool operator()(C a, C b) const { return (a != C(0)) | (b != C(0)); } };
struct LogicalXor { template <class C> bool operator()(C a, C b) const { return (a != C(0)) != (b != C(0)); } };

}  // namespace lucid::cpu::fn
