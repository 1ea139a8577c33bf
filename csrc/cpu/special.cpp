// CPU-stream log1p, expm1, log2, atan2 (see cpu/special.h for the accuracy argument).
#include "cpu/special.h"

#include <cmath>

#include "core/dispatch.h"

namespace lucid::cpu {

namespace {

template <class T, class F>
void map1(const Tensor& x, const Tensor& out, F f) {
  const T* in = x.data<T>();
  T* o = out.data<T>();
  int64_t n = out.numel();
  using C = compute_t<T>;  // float for the half types; float64 stays double throughout
  for (int64_t i = 0; i < n; ++i) o[i] = T(static_cast<C>(f(static_cast<double>(static_cast<C>(in[i])))));
}

}  // namespace

void special_unary(SpecialOp op, const Tensor& x, const Tensor& out) {
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      throw TypeError("internal: special_unary on an integer dtype");
    } else {
      switch (op) {
        case SpecialOp::Log1p: return map1<T>(x, out, [](double v) { return std::log1p(v); });
        case SpecialOp::Expm1: return map1<T>(x, out, [](double v) { return std::expm1(v); });
        case SpecialOp::Log2: return map1<T>(x, out, [](double v) { return std::log2(v); });
      }
    }
  });
}

void atan2(const Tensor& y, const Tensor& x, const Tensor& out) {
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      throw TypeError("internal: atan2 on an integer dtype");
    } else {
      const T* a = y.data<T>();
      const T* b = x.data<T>();
      T* o = out.data<T>();
      int64_t n = out.numel();
      using C = compute_t<T>;
      for (int64_t i = 0; i < n; ++i)
        o[i] = T(static_cast<C>(std::atan2(static_cast<double>(static_cast<C>(a[i])),
                                           static_cast<double>(static_cast<C>(b[i])))));
    }
  });
}

}  // namespace lucid::cpu
