// CPU-stream in-place kernels and the fused optimizer steps. Pointers here are
// not restrict-qualified: the destination is also an input.
#include "cpu/inplace.h"

#include <cmath>
#include <type_traits>

#include "core/dispatch.h"
#include "core/errors.h"
#include "core/thread_pool.h"
#include "cpu/elementwise_functors.h"
#include "cpu/elementwise_loops.h"

namespace lucid::cpu {

namespace {

// Calls f(T{}) with the destination's element type: float32 only today (the
// engine's one full-precision float); half types take the copy-in route.
template <class F>
void floating(const Tensor& t, F&& f) {
  if (t.dtype() == DType::Float32) return f(float{});
  throw TypeError("internal: in-place kernel needs a float32 destination");
}

template <class T, class Op>
void binary_typed(Op op, const Tensor& dst, const Tensor& other) {
  T* d = dst.data<T>();
  const T* o = other.data<T>();
  int64_t n = dst.numel();
  if (other.numel() == 1 && n != 1) {
    T v = o[0];
    parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) d[i] = op(d[i], v);
    });
    return;
  }
  parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) d[i] = op(d[i], o[i]);
  });
}

template <class T, class Op>
void unary_typed(Op op, const Tensor& dst) {
  T* d = dst.data<T>();
  parallel_for(dst.numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) d[i] = op(d[i]);
  });
}

}  // namespace

void binary_(BinaryOp op, const Tensor& dst, const Tensor& other) {
  floating(dst, [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case BinaryOp::Add: return binary_typed<T>(fn::Add{}, dst, other);
      case BinaryOp::Sub: return binary_typed<T>(fn::Sub{}, dst, other);
      case BinaryOp::Mul: return binary_typed<T>(fn::Mul{}, dst, other);
      case BinaryOp::Div: return binary_typed<T>(fn::Div{}, dst, other);
      default: throw TypeError("internal: no in-place kernel for this binary op");
    }
  });
}

void unary_(UnaryOp op, const Tensor& dst) {
  floating(dst, [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case UnaryOp::Neg: return unary_typed<T>(fn::Neg{}, dst);
      case UnaryOp::Abs: return unary_typed<T>(fn::Abs{}, dst);
      case UnaryOp::Relu: return unary_typed<T>(fn::Relu{}, dst);
      case UnaryOp::Sqrt: return unary_typed<T>(fn::Sqrt{}, dst);
      case UnaryOp::Rsqrt: return unary_typed<T>(fn::Rsqrt{}, dst);
      case UnaryOp::Exp: return unary_typed<T>(fn::Exp{}, dst);
      case UnaryOp::Log: return unary_typed<T>(fn::Log{}, dst);
      case UnaryOp::Tanh: return unary_typed<T>(fn::Tanh{}, dst);
      case UnaryOp::Sigmoid: return unary_typed<T>(fn::Sigmoid{}, dst);
      default: throw TypeError("internal: no in-place kernel for this unary op");
    }
  });
}

void addc_(BinaryOp op, const Tensor& dst, const Tensor& t1, const Tensor& t2, double value) {
  floating(dst, [&](auto tag) {
    using T = decltype(tag);
    T* d = dst.data<T>();
    const T* a = t1.data<T>();
    const T* b = t2.data<T>();
    T v = static_cast<T>(value);
    bool div = op == BinaryOp::Div;
    parallel_for(dst.numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      if (div) {
        for (int64_t i = lo; i < hi; ++i) d[i] = d[i] + v * a[i] / b[i];
      } else {
        for (int64_t i = lo; i < hi; ++i) d[i] = d[i] + v * a[i] * b[i];
      }
    });
  });
}

void lerp_(const Tensor& dst, const Tensor& end, double weight) {
  floating(dst, [&](auto tag) {
    using T = decltype(tag);
    T* d = dst.data<T>();
    const T* e = end.data<T>();
    const T w = static_cast<T>(weight), rest = static_cast<T>(1.0 - weight);  // 1 - w in double, as ops/ does
    // Two forms, as in docs/numerics.md, so that weight 1 gives `end` exactly.
    const bool low = std::abs(weight) < 0.5;
    parallel_for(dst.numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      if (low) {
        for (int64_t i = lo; i < hi; ++i) d[i] = d[i] + w * (e[i] - d[i]);
      } else {
        for (int64_t i = lo; i < hi; ++i) d[i] = e[i] - (e[i] - d[i]) * rest;
      }
    });
  });
}

namespace {

// Calls f(std::bool_constant<b>...) so each case of the step's options is a
// separate loop without branches, which the compiler vectorizes.
template <class F>
void with_flags(F&& f) { f(); }
template <class F, class... Rest>
void with_flags(F&& f, bool b, Rest... rest) {
  if (b)
    with_flags([&](auto... c) { f(std::true_type{}, c...); }, rest...);
  else
    with_flags([&](auto... c) { f(std::false_type{}, c...); }, rest...);
}

template <bool kMax, bool kWd, bool kBuf, bool kInit, bool kNest>
LUCID_AVX2_CLONES void sgd_range(float* p, const float* g, float* b, float wd, float mom, float damp, float lr,
                                 int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) {
    float gi = kMax ? -g[i] : g[i];
    if constexpr (kWd) gi = gi + p[i] * wd;
    if constexpr (kBuf) {
      float bi = kInit ? gi : b[i] * mom + gi * damp;
      b[i] = bi;
      gi = kNest ? gi + bi * mom : bi;
    }
    p[i] = p[i] - gi * lr;
  }
}

template <bool kMax, bool kWd, bool kDecoupled, bool kAms>
LUCID_AVX2_CLONES void adam_range(float* p, const float* g, float* m, float* v, float* vmax, float b1, float c1,
                                  float b2, float c2, float eps, float wd, float shrink, float bc2, float ss,
                                  int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) {
    float gi = kMax ? -g[i] : g[i];
    float pi = p[i];
    if constexpr (kWd && kDecoupled) pi = pi * shrink;
    if constexpr (kWd && !kDecoupled) gi = gi + pi * wd;
    float mi = m[i] * b1 + gi * c1;
    float vi = v[i] * b2 + gi * gi * c2;
    m[i] = mi;
    v[i] = vi;
    if constexpr (kAms) {
      vi = fn::Maximum{}(vmax[i], vi);
      vmax[i] = vi;
    }
    float denom = std::sqrt(vi) / bc2 + eps;
    p[i] = pi - mi / denom * ss;
  }
}

template <bool kMax, bool kWd, bool kCentered, bool kMom>
LUCID_AVX2_CLONES void rmsprop_range(float* p, const float* g, float* v, float* a, float* b, float alpha, float c,
                                     float eps, float wd, float mom, float lr, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) {
    float gi = kMax ? -g[i] : g[i];
    if constexpr (kWd) gi = gi + p[i] * wd;
    float vi = v[i] * alpha + gi * gi * c;
    v[i] = vi;
    float avg;
    if constexpr (kCentered) {
      float ai = a[i] * alpha + gi * c;
      a[i] = ai;
      avg = std::sqrt(vi - ai * ai) + eps;
    } else {
      avg = std::sqrt(vi) + eps;
    }
    if constexpr (kMom) {
      float bi = b[i] * mom + gi / avg;
      b[i] = bi;
      p[i] = p[i] - bi * lr;
    } else {
      p[i] = p[i] - gi / avg * lr;
    }
  }
}

}  // namespace

// Each scalar is rounded to float32 once, as the per-op path rounds a Python
// float to the tensor's dtype: the fused step matches it bit for bit.
void sgd_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& bufs, const std::vector<bool>& fresh, double lr, double momentum,
               double dampening, double weight_decay, bool nesterov, bool maximize) {
  const float wd = static_cast<float>(weight_decay), mom = static_cast<float>(momentum);
  const float damp = static_cast<float>(1.0 - dampening), step = static_cast<float>(lr);
  const bool use_buf = momentum != 0;
  for (size_t k = 0; k < params.size(); ++k) {
    float* p = params[k].data<float>();
    const float* g = grads[k].data<float>();
    float* b = use_buf ? bufs[k].data<float>() : nullptr;
    with_flags(
        [&](auto mx, auto dec, auto buf, auto init, auto nest) {
          parallel_for(params[k].numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
            sgd_range<mx(), dec(), buf(), init(), nest()>(p, g, b, wd, mom, damp, step, lo, hi);
          });
        },
        maximize, weight_decay != 0, use_buf, use_buf && fresh[k], nesterov);
  }
}

void adam_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_sqs, const std::vector<double>& bias2_sqrt,
                const std::vector<double>& step_size, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool decoupled, bool maximize) {
  const bool amsgrad = !max_sqs.empty();
  const float b1 = static_cast<float>(beta1), c1 = static_cast<float>(1.0 - beta1);
  const float b2 = static_cast<float>(beta2), c2 = static_cast<float>(1.0 - beta2);
  const float e = static_cast<float>(eps), wd = static_cast<float>(weight_decay);
  const float shrink = static_cast<float>(1.0 - lr * weight_decay);
  for (size_t k = 0; k < params.size(); ++k) {
    const float bc2 = static_cast<float>(bias2_sqrt[k]), ss = static_cast<float>(step_size[k]);
    float* p = params[k].data<float>();
    const float* g = grads[k].data<float>();
    float* m = exp_avgs[k].data<float>();
    float* v = exp_avg_sqs[k].data<float>();
    float* vmax = amsgrad ? max_sqs[k].data<float>() : nullptr;
    with_flags(
        [&](auto mx, auto has_wd, auto dec, auto ams) {
          parallel_for(params[k].numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
            adam_range<mx(), has_wd(), dec(), ams()>(p, g, m, v, vmax, b1, c1, b2, c2, e, wd, shrink, bc2, ss, lo,
                                                     hi);
          });
        },
        maximize, weight_decay != 0, decoupled, amsgrad);
  }
}

void rmsprop_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                   const std::vector<Tensor>& bufs, double lr, double alpha, double eps, double weight_decay,
                   double momentum, bool maximize) {
  const bool centered = !grad_avgs.empty(), use_buf = !bufs.empty();
  const float al = static_cast<float>(alpha), c = static_cast<float>(1.0 - alpha);
  const float e = static_cast<float>(eps), wd = static_cast<float>(weight_decay);
  const float mom = static_cast<float>(momentum), step = static_cast<float>(lr);
  for (size_t k = 0; k < params.size(); ++k) {
    float* p = params[k].data<float>();
    const float* g = grads[k].data<float>();
    float* v = square_avgs[k].data<float>();
    float* a = centered ? grad_avgs[k].data<float>() : nullptr;
    float* b = use_buf ? bufs[k].data<float>() : nullptr;
    with_flags(
        [&](auto mx, auto has_wd, auto cen, auto has_mom) {
          parallel_for(params[k].numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
            rmsprop_range<mx(), has_wd(), cen(), has_mom()>(p, g, v, a, b, al, c, e, wd, mom, step, lo, hi);
          });
        },
        maximize, weight_decay != 0, centered, use_buf);
  }
}

}  // namespace lucid::cpu
