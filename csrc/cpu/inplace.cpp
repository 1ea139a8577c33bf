// CPU-stream in-place kernels and the fused optimizer steps. Pointers here are
// not restrict-qualified: the destination is also an input.
#include "cpu/inplace.h"

#include <cmath>

#include "core/dispatch.h"
#include "core/errors.h"
#include "core/thread_pool.h"
#include "cpu/elementwise_functors.h"

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
    T w = static_cast<T>(weight);
    // Two forms, as in docs/numerics.md, so that weight 1 gives `end` exactly.
    bool low = std::abs(w) < T(0.5);
    parallel_for(dst.numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      if (low) {
        for (int64_t i = lo; i < hi; ++i) d[i] = d[i] + w * (e[i] - d[i]);
      } else {
        for (int64_t i = lo; i < hi; ++i) d[i] = e[i] - (e[i] - d[i]) * (T(1) - w);
      }
    });
  });
}

void sgd_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& bufs, const std::vector<bool>& fresh, double lr, double momentum,
               double dampening, double weight_decay, bool nesterov, bool maximize) {
  for (size_t k = 0; k < params.size(); ++k) {
    floating(params[k], [&](auto tag) {
      using T = decltype(tag);
      // Each scalar is rounded to T once, as the per-op path rounds a Python
      // float to the tensor's dtype: the fused step matches it bit for bit.
      const T wd = static_cast<T>(weight_decay), mom = static_cast<T>(momentum);
      const T damp = static_cast<T>(1.0 - dampening), step = static_cast<T>(lr);
      const bool use_buf = momentum != 0, init = use_buf && fresh[k];
      T* p = params[k].data<T>();
      const T* g = grads[k].data<T>();
      T* b = use_buf ? bufs[k].data<T>() : nullptr;
      parallel_for(params[k].numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          T gi = maximize ? -g[i] : g[i];
          if (weight_decay != 0) gi = gi + p[i] * wd;
          if (use_buf) {
            T bi = init ? gi : b[i] * mom + gi * damp;
            b[i] = bi;
            gi = nesterov ? gi + bi * mom : bi;
          }
          p[i] = p[i] - gi * step;
        }
      });
    });
  }
}

void adam_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_sqs, const std::vector<double>& bias2_sqrt,
                const std::vector<double>& step_size, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool decoupled, bool maximize) {
  const bool amsgrad = !max_sqs.empty();
  for (size_t k = 0; k < params.size(); ++k) {
    floating(params[k], [&](auto tag) {
      using T = decltype(tag);
      const T b1 = static_cast<T>(beta1), c1 = static_cast<T>(1.0 - beta1);
      const T b2 = static_cast<T>(beta2), c2 = static_cast<T>(1.0 - beta2);
      const T e = static_cast<T>(eps), wd = static_cast<T>(weight_decay);
      const T shrink = static_cast<T>(1.0 - lr * weight_decay);
      const T bc2 = static_cast<T>(bias2_sqrt[k]), ss = static_cast<T>(step_size[k]);
      T* p = params[k].data<T>();
      const T* g = grads[k].data<T>();
      T* m = exp_avgs[k].data<T>();
      T* v = exp_avg_sqs[k].data<T>();
      T* vmax = amsgrad ? max_sqs[k].data<T>() : nullptr;
      parallel_for(params[k].numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          T gi = maximize ? -g[i] : g[i];
          T pi = p[i];
          if (weight_decay != 0) {
            if (decoupled) pi = pi * shrink;
            else gi = gi + pi * wd;
          }
          T mi = m[i] * b1 + gi * c1;
          T vi = v[i] * b2 + gi * gi * c2;
          m[i] = mi;
          v[i] = vi;
          if (amsgrad) {
            vi = fn::Maximum{}(vmax[i], vi);
            vmax[i] = vi;
          }
          T denom = std::sqrt(vi) / bc2 + e;
          p[i] = pi - mi / denom * ss;
        }
      });
    });
  }
}

}  // namespace lucid::cpu
