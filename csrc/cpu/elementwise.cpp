// CPU-stream unary elementwise kernels and predicates (isnan, ...).
#include "cpu/elementwise.h"

#include "core/errors.h"
#include "cpu/elementwise_functors.h"
#include "cpu/elementwise_loops.h"

namespace lucid::cpu {

namespace {

template <class T, class O, class F>
void run(F f, const Tensor& x, const Tensor& out) {
  unary_contiguous<T, O>(f, x.data<T>(), out.data<O>(), out.numel());
}

// Functors with a float32 fast path valid on part of the range (sin, cos).
template <class T, class O, class F>
void run_with_fallback(F f, const Tensor& x, const Tensor& out) {
  if constexpr (std::is_same_v<compute_t<T>, float>)
    unary_contiguous_with_fallback<T, O>(f, x.data<T>(), out.data<O>(), out.numel());
  else
    run<T, O>(f, x, out);
}

}  // namespace

void unary(UnaryOp op, const Tensor& x, const Tensor& out) {
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw TypeError("internal: boolean unary kernel");
    } else {
      switch (op) {
        case UnaryOp::Neg: return run<T, T>(fn::Neg{}, x, out);
        case UnaryOp::Abs: return run<T, T>(fn::Abs{}, x, out);
        case UnaryOp::Sign: return run<T, T>(fn::Sign{}, x, out);
        case UnaryOp::Relu: return run<T, T>(fn::Relu{}, x, out);
        default: break;
      }
      if constexpr (!std::is_integral_v<T>) {
        switch (op) {
          case UnaryOp::Exp: return run<T, T>(fn::Exp{}, x, out);
          case UnaryOp::Log: return run<T, T>(fn::Log{}, x, out);
          case UnaryOp::Sqrt: return run<T, T>(fn::Sqrt{}, x, out);
          case UnaryOp::Rsqrt: return run<T, T>(fn::Rsqrt{}, x, out);
          case UnaryOp::Sin: return run_with_fallback<T, T>(fn::Sin{}, x, out);
          case UnaryOp::Cos: return run_with_fallback<T, T>(fn::Cos{}, x, out);
          case UnaryOp::Tanh: return run<T, T>(fn::Tanh{}, x, out);
          case UnaryOp::Sigmoid: return run<T, T>(fn::Sigmoid{}, x, out);
          case UnaryOp::Erf: return run<T, T>(fn::Erf{}, x, out);
          case UnaryOp::Gelu: return run<T, T>(fn::Gelu{}, x, out);
          case UnaryOp::GeluTanh: return run<T, T>(fn::GeluTanh{}, x, out);
          case UnaryOp::Floor: return run<T, T>(fn::Floor{}, x, out);
          case UnaryOp::Ceil: return run<T, T>(fn::Ceil{}, x, out);
          case UnaryOp::Round: return run<T, T>(fn::Round{}, x, out);
          default: break;
        }
      }
      throw TypeError("internal: unary kernel for this dtype does not exist");
    }
  });
}

void predicate(PredicateOp op, const Tensor& x, const Tensor& out) {
  dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      throw TypeError("internal: predicate kernel on an integer dtype");
    } else {
      switch (op) {
        case PredicateOp::IsNan: return run<T, bool>(fn::IsNan{}, x, out);
        case PredicateOp::IsInf: return run<T, bool>(fn::IsInf{}, x, out);
        case PredicateOp::IsFinite: return run<T, bool>(fn::IsFinite{}, x, out);
      }
    }
  });
}

void clamp_integer(const Tensor& x, const Tensor& lo, const Tensor& hi, const Tensor& out) {
  dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T l = lo.data<T>()[0], h = hi.data<T>()[0];
      // the selects of maximum then minimum, in one pass
      unary_contiguous([l, h](auto v) { v = v < l ? l : v; return v > h ? h : v; }, x.data<T>(), out.data<T>(),
                       x.numel());
    } else {
      throw TypeError("internal: clamp_integer on a non-integer dtype");
    }
  });
}

}  // namespace lucid::cpu
