// CPU-stream fused rows of the normalization family; see cpu/normalization.h.
#include "cpu/normalization.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/convert.h"
#include "core/errors.h"
#include "core/thread_pool.h"
#include "cpu/elementwise_loops.h"
#include "cpu/elementwise_math.h"
#include "cpu/reduce_run.h"

namespace lucid::cpu {

int64_t softmax_row_limit() { return kTask; }

namespace {

// The per-row elementwise passes of softmax_rows, vectorized like the
// elementwise kernels (their ISA clones; the same operations, so the same bits).
LUCID_AVX2_CLONES void exp_of_shifted(const float* __restrict r, float m, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fast::exp_f32(r[i] - m);
}
LUCID_AVX2_CLONES void shifted_and_exp(const float* __restrict r, float m, float* __restrict y,
                                       float* __restrict e, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    y[i] = r[i] - m;
    e[i] = fast::exp_f32(y[i]);
  }
}
LUCID_AVX2_CLONES void divide_by(float* __restrict y, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] / s;
}
LUCID_AVX2_CLONES void subtract(float* __restrict y, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] - s;
}

}  // namespace

void softmax_rows(const Tensor& x, const Tensor& out, bool log) {
  const int64_t red = x.shape().empty() ? 1 : x.shape().back();
  const int64_t rows = red ? x.numel() / red : 0;
  check<RuntimeError>(red >= 1 && red <= kTask && x.is_contiguous() && x.dtype() == DType::Float32,
                      "internal: softmax_rows takes contiguous float32 rows of 1 .. softmax_row_limit() elements");
  const float* xp = x.data<float>();
  float* yp = out.data<float>();
  parallel_for(rows, std::max<int64_t>(1, kElementwiseGrain / red), [&](int64_t lo, int64_t hi) {
    std::vector<float> e(log ? static_cast<size_t>(red) : 0);
    for (int64_t o = lo; o < hi; ++o) {
      const float* r = xp + o * red;
      float* y = yp + o * red;
      const float m = convert<float>(reduce_run<ExtremeR<float, true>>(r, red));  // amax
      if (log) {  // shifted - log(sum(exp(shifted)))
        shifted_and_exp(r, m, y, e.data(), red);
        subtract(y, fast::log_f32(convert<float>(reduce_run<SumR<float>>(e.data(), red))), red);
      } else {  // exp(shifted) / sum(exp(shifted))
        exp_of_shifted(r, m, y, red);
        divide_by(y, convert<float>(reduce_run<SumR<float>>(y, red)), red);
      }
    }
  });
}

namespace {

LUCID_AVX2_CLONES void centre(const float* __restrict r, float mean, float* __restrict c, float* __restrict sq,
                              int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    c[i] = r[i] - mean;
    sq[i] = c[i] * c[i];
  }
}
LUCID_AVX2_CLONES void scale_shift(const float* __restrict c, float rstd, const float* __restrict w,
                                   const float* __restrict b, float* __restrict xhat, float* __restrict y,
                                   int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float h = c[i] * rstd;
    if (xhat) xhat[i] = h;
    float v = h;
    if (w) v = v * w[i];
    if (b) v = v + b[i];
    y[i] = v;
  }
}

}  // namespace

void layer_norm_rows(const Tensor& x, int64_t row, const float* w, const float* b, float eps, const Tensor& y,
                     const Tensor* xhat, const Tensor& rstd) {
  check<RuntimeError>(row >= 1 && row <= kTask && x.numel() % row == 0 && x.is_contiguous() &&
                          x.dtype() == DType::Float32,
                      "internal: layer_norm_rows takes contiguous float32 rows of 1 .. softmax_row_limit() elements");
  const int64_t rows = x.numel() / row;
  const float count = static_cast<float>(row);  // ops::mean's divisor: the count as a float32 0-d tensor
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  float* hp = xhat ? xhat->data<float>() : nullptr;
  float* rp = rstd.data<float>();
  parallel_for(rows, std::max<int64_t>(1, kElementwiseGrain / row), [&](int64_t lo, int64_t hi) {
    std::vector<float> c(static_cast<size_t>(row)), sq(static_cast<size_t>(row));
    for (int64_t o = lo; o < hi; ++o) {
      const float* r = xp + o * row;
      const float mean = convert<float>(reduce_run<SumR<float>>(r, row)) / count;
      centre(r, mean, c.data(), sq.data(), row);
      const float var = convert<float>(reduce_run<SumR<float>>(sq.data(), row)) / count;
      const float rs = 1.0f / std::sqrt(var + eps);  // rsqrt(var + eps), as the Rsqrt kernel
      rp[o] = rs;
      scale_shift(c.data(), rs, w, b, hp ? hp + o * row : nullptr, yp + o * row, row);
    }
  });
}

}  // namespace lucid::cpu
