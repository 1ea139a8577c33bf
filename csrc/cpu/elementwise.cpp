#include "cpu/elementwise.h"

#include <cmath>

#include "core/dispatch.h"
#include "core/strided.h"
#include "core/thread_pool.h"

namespace lucid::cpu {

namespace {

// Scalar definitions, one per op, in the compute type C (float for halves).
template <class C>
C apply(UnaryOp op, C x) {
  switch (op) {
    case UnaryOp::Neg: return -x;
    case UnaryOp::Exp: return static_cast<C>(std::exp(x));
  }
  return x;
}

// Each binary op is a functor so the contiguous loop below is a plain,
// vectorizable `out[i] = f(a[i], b[i])`.
struct AddF { template <class C> C operator()(C a, C b) const { return a + b; } };
struct SubF { template <class C> C operator()(C a, C b) const { return a - b; } };
struct MulF { template <class C> C operator()(C a, C b) const { return a * b; } };
struct DivF { template <class C> C operator()(C a, C b) const { return a / b; } };

template <class T, class F>
void binary_typed(F f, const Tensor& a, const Tensor& b, const Tensor& out) {
  using C = compute_t<T>;
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  int64_t n = out.numel();
  if (n == 0) return;
  auto store = [](C v) { if constexpr (is_half_v<T>) return T(v); else return v; };
  bool a_full = a.shape() == out.shape() && a.is_contiguous();
  bool b_full = b.shape() == out.shape() && b.is_contiguous();
  if (a_full && b_full) {
    parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) po[i] = store(f(static_cast<C>(pa[i]), static_cast<C>(pb[i])));
    });
    return;
  }
  if (a_full && b.numel() == 1) {  // tensor-scalar, the other common case
    C vb = static_cast<C>(pb[0]);
    parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) po[i] = store(f(static_cast<C>(pa[i]), vb));
    });
    return;
  }
  StridedLoop<3> loop{out.shape(),
                      {broadcast_strides(a.shape(), a.strides(), out.shape()),
                       broadcast_strides(b.shape(), b.strides(), out.shape()), out.strides()}};
  loop.run([&](auto off, int64_t len, auto st) {
    const T* xa = pa + off[0];
    const T* xb = pb + off[1];
    T* xo = po + off[2];
    for (int64_t i = 0; i < len; ++i)
      xo[i] = store(f(static_cast<C>(xa[i * st[0]]), static_cast<C>(xb[i * st[1]])));
  });
}

template <class F>
void binary_any(F f, const Tensor& a, const Tensor& b, const Tensor& out) {
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) throw TypeError("internal: boolean arithmetic kernel");
    else binary_typed<T>(f, a, b, out);
  });
}

}  // namespace

void unary(UnaryOp op, const Tensor& x, const Tensor& out) {
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw TypeError("internal: boolean unary kernel");
    } else {
      using C = compute_t<T>;
      Tensor xc = x;  // ops layer passes contiguous inputs
      const T* px = xc.data<T>();
      T* po = out.data<T>();
      parallel_for(out.numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) po[i] = T(apply<C>(op, static_cast<C>(px[i])));
      });
    }
  });
}

void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  switch (op) {
    case BinaryOp::Add: return binary_any(AddF{}, a, b, out);
    case BinaryOp::Sub: return binary_any(SubF{}, a, b, out);
    case BinaryOp::Mul: return binary_any(MulF{}, a, b, out);
    case BinaryOp::Div: return binary_any(DivF{}, a, b, out);
  }
}

}  // namespace lucid::cpu
