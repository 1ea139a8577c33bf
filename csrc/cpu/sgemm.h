// Row-major single-precision GEMM through CBLAS, for the nn kernels
// (convolution as im2col + GEMM, linear layers).
//   C[M,N] = alpha * op(A)[M,K] @ op(B)[K,N] + beta * C
// Accelerate on macOS; elsewhere scipy-openblas32, whose CBLAS symbols carry
// a `scipy_` prefix. (cpu/blas.h from the reduction family maps the same
// names with alpha = 1, beta = 0; this header adds alpha / beta, which the
// conv and linear kernels use to accumulate.)
#pragma once
#include <cstdint>

#include "core/thread_pool.h"
#include "cpu/blas.h"

#if defined(LUCID_USE_ACCELERATE)
#include <Accelerate/Accelerate.h>
#define LUCID_SGEMM cblas_sgemm
#else
#include <cblas.h>
#define LUCID_SGEMM scipy_cblas_sgemm
#endif

namespace lucid::cpu {

// BLAS's own threads follow lucid's thread count (lucid.set_num_threads), as
// cpu/linalg.cpp does, so one setting governs the whole CPU stream.
inline void follow_lucid_threads() {
  static int current = -1;
  const int n = get_num_threads();
  if (n != current) {
    current = n;
    blas::set_num_threads(n);
  }
}

inline void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  follow_lucid_threads();
  if (k == 0) {  // BLAS leaves C untouched when k == 0 only for beta == 1
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  LUCID_SGEMM(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

}  // namespace lucid::cpu
