// The one place that names the CBLAS implementation: Accelerate on macOS,
// scipy-openblas32 elsewhere (its symbols carry a `scipy_` prefix). Kernels
// call lucid::blas::sgemm and never include a BLAS header themselves.
#pragma once
#include <cstdint>

#ifdef LUCID_USE_ACCELERATE
#include <Accelerate/Accelerate.h>
#else
#include <cblas.h>  // from scipy_openblas32/include
#endif

namespace lucid::blas {

// Row-major C[m, n] = A[m, k] @ B[k, n] (alpha 1, beta 0); trans_a / trans_b
// read A / B as the transpose of what is stored with leading dimension lda / ldb.
inline void sgemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                  float* c, int ldc) {
#ifdef LUCID_USE_ACCELERATE
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
              a, lda, b, ldb, 0.0f, c, ldc);
#else
  scipy_cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                    1.0f, a, lda, b, ldb, 0.0f, c, ldc);
#endif
}

// BLAS's own threads follow lucid's thread count (Accelerate manages its own).
inline void set_num_threads(int n) {
#ifdef LUCID_USE_ACCELERATE
  (void)n;
#else
  scipy_openblas_set_num_threads(n);
#endif
}

}  // namespace lucid::blas
