#include "cpu/linear.h"

#include <vector>

#include "cpu/blas.h"

namespace lucid::cpu {

void linear(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y) {
  const int64_t m = x.size(0), k = x.size(1), o = w.size(0);
  float* yp = y.data<float>();
  if (b.defined()) {  // start from the bias so one GEMM with beta = 1 adds the product
    const float* bp = b.data<float>();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < o; ++j) yp[i * o + j] = bp[j];
  }
  blas::sgemm(false, true, m, o, k, 1.0f, x.data<float>(), k, w.data<float>(), k, b.defined() ? 1.0f : 0.0f, yp, o);
}

void linear_backward(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& gx, const Tensor& gw,
                     const Tensor& gb) {
  const int64_t m = x.size(0), k = x.size(1), o = w.size(0);
  const float* gp = g.data<float>();
  if (gx.defined()) blas::sgemm(false, false, m, k, o, 1.0f, gp, o, w.data<float>(), k, 0.0f, gx.data<float>(), k);
  if (gw.defined()) blas::sgemm(true, false, o, k, m, 1.0f, gp, o, x.data<float>(), k, 0.0f, gw.data<float>(), k);
  if (gb.defined()) {
    // Row by row keeps the access contiguous; double accumulators for long batches.
    std::vector<double> acc(static_cast<size_t>(o), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < o; ++j) acc[j] += gp[i * o + j];
    float* gbp = gb.data<float>();
    for (int64_t j = 0; j < o; ++j) gbp[j] = static_cast<float>(acc[j]);
  }
}

}  // namespace lucid::cpu
