// CPU-stream kernels of the math family (accuracy argument: cpu/math.h).
#include "cpu/math.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/dispatch.h"

namespace lucid::cpu {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kLn2 = 0.69314718055994530942;

template <class T, class F>
void map1(const Tensor& x, const Tensor& out, F f) {
  const T* in = x.data<T>();
  T* o = out.data<T>();
  int64_t n = out.numel();
  using C = compute_t<T>;  // float for the half types; float64 stays double throughout
  for (int64_t i = 0; i < n; ++i) o[i] = T(static_cast<C>(f(static_cast<double>(static_cast<C>(in[i])))));
}

template <class T, class F>
void map2(const Tensor& a, const Tensor& b, const Tensor& out, F f) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* o = out.data<T>();
  int64_t n = out.numel();
  using C = compute_t<T>;
  for (int64_t i = 0; i < n; ++i)
    o[i] = T(static_cast<C>(f(static_cast<double>(static_cast<C>(pa[i])), static_cast<double>(static_cast<C>(pb[i])))));
}

// log(e^a + e^b) = max + log1p(e^-|a - b|); equal infinities return themselves
// (a - b would be NaN there).
double logaddexp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return a + kLn2;  // also +-inf
  double m = a > b ? a : b;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

double logaddexp2(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return a + 1.0;
  double m = a > b ? a : b;
  return m + std::log1p(std::exp2(-std::fabs(a - b))) / kLn2;
}

// x * log(y), 0 where x == 0 unless y is NaN (PyTorch's xlogy).
double xlogy(double x, double y) {
  if (std::isnan(y)) return y;
  if (x == 0) return 0.0;
  return x * std::log(y);
}

double sinc(double x) {
  if (x == 0) return 1.0;
  double px = kPi * x;
  return std::sin(px) / px;
}

// The next representable T after a toward b, stepping the bit pattern: exact
// for every float type (the half types included).
template <class T>
T nextafter_bits(T a, T b) {
  using U = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
  using C = compute_t<T>;
  C fa = static_cast<C>(a), fb = static_cast<C>(b);
  if (std::isnan(fa) || std::isnan(fb)) return T(std::numeric_limits<C>::quiet_NaN());  // the default NaN, as the GPU stream
  if (fa == fb) return b;
  U u;
  if (fa == 0) {  // the smallest subnormal with b's sign
    u = 1;
    T r;
    std::memcpy(&r, &u, sizeof(T));
    return fb > 0 ? r : T(-static_cast<C>(r));
  }
  std::memcpy(&u, &a, sizeof(T));
  // Away from zero (magnitude up) when b lies beyond a on a's side of zero.
  if ((fb > fa) == (fa > 0)) ++u; else --u;
  T r;
  std::memcpy(&r, &u, sizeof(T));
  return r;
}

}  // namespace

// Winitzki's closed form (relative error < 2e-3) then Newton steps on
// erf(y) = x; for |x| >= 0.5 the residual is erfc(y) - (1 - |x|), where
// 1 - |x| is exact, so the result keeps full double accuracy up to |x| -> 1.
double erfinv_double(double x) {
  if (std::isnan(x) || x < -1.0 || x > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 1.0) return std::numeric_limits<double>::infinity();
  if (x == -1.0) return -std::numeric_limits<double>::infinity();
  if (x == 0.0) return x;
  double ax = std::fabs(x);
  const double a = 0.147;
  double l = std::log1p(-ax * ax);
  double t = 2.0 / (kPi * a) + 0.5 * l;
  double y = std::sqrt(std::sqrt(t * t - l / a) - t);
  const double two_over_sqrt_pi = 1.12837916709551257390;
  for (int it = 0; it < 4; ++it) {
    double r = ax < 0.5 ? std::erf(y) - ax : (1.0 - ax) - std::erfc(y);
    double d = two_over_sqrt_pi * std::exp(-y * y);
    if (d == 0) break;
    y -= r / d;
  }
  return x < 0 ? -y : y;
}

// psi(x): reflection psi(x) = psi(1 - x) - pi / tan(pi x) below 0.5, the
// recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic
// series ln x - 1/(2x) - sum B_2k / (2k x^2k) through x^-12 (error < 1e-16
// at x >= 10). psi(+-0) = -+inf and psi(negative integer) = NaN, as PyTorch.
double digamma_double(double x) {
  if (std::isnan(x)) return x;
  if (x == 0) return std::signbit(x) ? std::numeric_limits<double>::infinity()
                                     : -std::numeric_limits<double>::infinity();
  if (x == -std::numeric_limits<double>::infinity()) return std::numeric_limits<double>::quiet_NaN();
  if (x < 0 && x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
  double acc = 0.0;
  if (x < 0.5) {
    acc -= kPi / std::tan(kPi * x);
    x = 1.0 - x;
  }
  while (x < 10.0) {
    acc -= 1.0 / x;
    x += 1.0;
  }
  double z = 1.0 / (x * x);
  double series = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760))))));
  return acc + std::log(x) - 0.5 / x - series;
}

void math_unary(MathUnaryOp op, const Tensor& x, const Tensor& out) {
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      throw TypeError("internal: math_unary on an integer dtype");
    } else {
      switch (op) {
        case MathUnaryOp::Tan: return map1<T>(x, out, [](double v) { return std::tan(v); });
        case MathUnaryOp::Sinh: return map1<T>(x, out, [](double v) { return std::sinh(v); });
        case MathUnaryOp::Cosh: return map1<T>(x, out, [](double v) { return std::cosh(v); });
        case MathUnaryOp::Asin: return map1<T>(x, out, [](double v) { return std::asin(v); });
        case MathUnaryOp::Acos: return map1<T>(x, out, [](double v) { return std::acos(v); });
        case MathUnaryOp::Atan: return map1<T>(x, out, [](double v) { return std::atan(v); });
        case MathUnaryOp::Asinh: return map1<T>(x, out, [](double v) { return std::asinh(v); });
        case MathUnaryOp::Acosh: return map1<T>(x, out, [](double v) { return std::acosh(v); });
        case MathUnaryOp::Atanh: return map1<T>(x, out, [](double v) { return std::atanh(v); });
        case MathUnaryOp::Trunc: return map1<T>(x, out, [](double v) { return std::trunc(v); });
        case MathUnaryOp::Frac: return map1<T>(x, out, [](double v) { return v - std::trunc(v); });
        case MathUnaryOp::Log10: return map1<T>(x, out, [](double v) { return std::log10(v); });
        case MathUnaryOp::Exp2: return map1<T>(x, out, [](double v) { return std::exp2(v); });
        case MathUnaryOp::Erfc: return map1<T>(x, out, [](double v) { return std::erfc(v); });
        case MathUnaryOp::Erfinv: return map1<T>(x, out, [](double v) { return erfinv_double(v); });
        case MathUnaryOp::Lgamma: return map1<T>(x, out, [](double v) { return std::lgamma(v); });
        case MathUnaryOp::Digamma: return map1<T>(x, out, [](double v) { return digamma_double(v); });
        case MathUnaryOp::Sinc: return map1<T>(x, out, [](double v) { return sinc(v); });
      }
    }
  });
}

// GCC 12's vectorizer hits an internal compiler error on these bool-storing
// loops (x86-64, -O3): they stay scalar, which costs little for a predicate.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("no-tree-vectorize")
#endif
void math_predicate(MathPredicate op, const Tensor& x, const Tensor& out) {
  dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    bool* o = out.data<bool>();
    int64_t n = out.numel();
    if constexpr (std::is_integral_v<T>) {  // no infinities; bool and unsigned values are never negative
      if constexpr (std::is_signed_v<T>) {
        if (op == MathPredicate::Signbit) {
          for (int64_t i = 0; i < n; ++i) o[i] = in[i] < 0;
          return;
        }
      }
      std::fill(o, o + n, false);
    } else {
      using C = compute_t<T>;
      constexpr C inf = std::numeric_limits<C>::infinity();
      switch (op) {
        case MathPredicate::Signbit:
          for (int64_t i = 0; i < n; ++i) o[i] = std::signbit(static_cast<C>(in[i]));
          return;
        case MathPredicate::IsPosInf:
          for (int64_t i = 0; i < n; ++i) o[i] = static_cast<C>(in[i]) == inf;
          return;
        case MathPredicate::IsNegInf:
          for (int64_t i = 0; i < n; ++i) o[i] = static_cast<C>(in[i]) == -inf;
          return;
      }
    }
  });
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

void math_binary(MathBinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      throw TypeError("internal: math_binary on an integer dtype");
    } else {
      switch (op) {
        case MathBinaryOp::Hypot: return map2<T>(a, b, out, [](double x, double y) { return std::hypot(x, y); });
        case MathBinaryOp::LogAddExp: return map2<T>(a, b, out, logaddexp);
        case MathBinaryOp::LogAddExp2: return map2<T>(a, b, out, logaddexp2);
        case MathBinaryOp::Xlogy: return map2<T>(a, b, out, xlogy);
        case MathBinaryOp::Copysign: return map2<T>(a, b, out, [](double x, double y) { return std::copysign(x, y); });
        case MathBinaryOp::Fmax: return map2<T>(a, b, out, [](double x, double y) { return std::fmax(x, y); });
        case MathBinaryOp::Fmin: return map2<T>(a, b, out, [](double x, double y) { return std::fmin(x, y); });
        case MathBinaryOp::Nextafter: {
          const T* pa = a.data<T>();
          const T* pb = b.data<T>();
          T* o = out.data<T>();
          for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = nextafter_bits<T>(pa[i], pb[i]);
          return;
        }
      }
    }
  });
}

}  // namespace lucid::cpu
