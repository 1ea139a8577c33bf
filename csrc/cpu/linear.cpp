#include "cpu/linear.h"

#include <vector>

#include "cpu/blas.h"

namespace lucid::cpu {

namespace {

template <class T>
void linear_typed(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y) {
  const int64_t m = x.size(0), k = x.size(1), o = w.size(0);
  T* yp = y.data<T>();
  if (b.defined()) {  // start from the bias so one GEMM with beta = 1 adds the product
    const T* bp = b.data<T>();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < o; ++j) yp[i * o + j] = bp[j];
  }
  blas::gemm(false, true, m, o, k, T(1), x.data<T>(), k, w.data<T>(), k, b.defined() ? T(1) : T(0), yp, o);
}

template <class T>
void linear_backward_typed(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& gx, const Tensor& gw,
                           const Tensor& gb) {
  const int64_t m = x.size(0), k = x.size(1), o = w.size(0);
  const T* gp = g.data<T>();
  if (gx.defined()) blas::gemm(false, false, m, k, o, T(1), gp, o, w.data<T>(), k, T(0), gx.data<T>(), k);
  if (gw.defined()) blas::gemm(true, false, o, k, m, T(1), gp, o, x.data<T>(), k, T(0), gw.data<T>(), k);
  if (gb.defined()) {
    // Row by row keeps the access contiguous; double accumulators for long batches.
    std::vector<double> acc(static_cast<size_t>(o), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < o; ++j) acc[j] += gp[i * o + j];
    T* gbp = gb.data<T>();
    for (int64_t j = 0; j < o; ++j) gbp[j] = static_cast<T>(acc[j]);
  }
}

}  // namespace

// float64 tensors go through DGEMM; everything else arrives as float32 (SGEMM).
void linear(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y) {
  if (x.dtype() == DType::Float64) linear_typed<double>(x, w, b, y);
  else linear_typed<float>(x, w, b, y);
}

void linear_backward(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& gx, const Tensor& gw,
                     const Tensor& gb) {
  if (x.dtype() == DType::Float64) linear_backward_typed<double>(g, x, w, gx, gw, gb);
  else linear_backward_typed<float>(g, x, w, gx, gw, gb);
}

}  // namespace lucid::cpu
