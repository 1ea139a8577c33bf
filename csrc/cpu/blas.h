// The one place that names the CBLAS implementation: Accelerate on macOS,
// scipy-openblas32 elsewhere (its symbols carry a `scipy_` prefix). Kernels
// call lucid::blas::sgemm and never include a BLAS header themselves.
#pragma once
#include <climits>
#include <cstdint>

#include "core/errors.h"
#include "core/thread_pool.h"

#ifdef LUCID_USE_ACCELERATE
#include <Accelerate/Accelerate.h>
#define LUCID_CBLAS_SGEMM cblas_sgemm
#define LUCID_CBLAS_SGEMV cblas_sgemv
#define LUCID_CBLAS_DGEMM cblas_dgemm
#define LUCID_CBLAS_DGEMV cblas_dgemv
#else
#include <cblas.h>  // from scipy_openblas32/include
#define LUCID_CBLAS_SGEMM scipy_cblas_sgemm
#define LUCID_CBLAS_SGEMV scipy_cblas_sgemv
#define LUCID_CBLAS_DGEMM scipy_cblas_dgemm
#define LUCID_CBLAS_DGEMV scipy_cblas_dgemv
#endif

namespace lucid::blas {

// BLAS's own threads follow lucid's thread count (lucid.set_num_threads), so
// one setting governs the whole CPU stream. Accelerate manages its own.
inline void follow_lucid_threads() {
#ifndef LUCID_USE_ACCELERATE
  static int current = -1;
  int n = get_num_threads();
  if (n != current) {
    current = n;
    scipy_openblas_set_num_threads(n);
  }
#endif
}

// One row or one column of C is a matrix-vector product, which vector_product
// hands to GEMV (true) instead of GEMM. OpenBLAS's SGEMM runs it 3.8x slower than
// its SGEMV (a (1, 4096) x (4096, 4096)^T Linear, one thread, AMD Zen 4: 12.1
// against 3.2 ms), and decoding is all such products. Dimensions are checked by
// the caller; gemv is (trans, rows, cols, alpha, A, lda, x, incx, beta, y, incy).
template <class T, class Gemv>
bool vector_product(Gemv gemv, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                    int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  if (m == 1) {  // C[0, :] = alpha * a-row . op(B) + beta * C[0, :]
    const int inca = i(trans_a ? lda : 1);  // A is (1, k), or (k, 1) read transposed
    if (trans_b) gemv(CblasNoTrans, i(n), i(k), alpha, b, i(ldb), a, inca, beta, c, 1);  // B stored (n, k)
    else gemv(CblasTrans, i(k), i(n), alpha, b, i(ldb), a, inca, beta, c, 1);             // B stored (k, n)
    return true;
  }
  if (n == 1) {  // C[:, 0] = alpha * op(A) . b-column + beta * C[:, 0]
    const int incb = i(trans_b ? 1 : ldb);  // B is (k, 1), or (1, k) read transposed
    if (trans_a) gemv(CblasTrans, i(k), i(m), alpha, a, i(lda), b, incb, beta, c, i(ldc));  // A stored (k, m)
    else gemv(CblasNoTrans, i(m), i(k), alpha, a, i(lda), b, incb, beta, c, i(ldc));        // A stored (m, k)
    return true;
  }
  return false;
}

inline void sgemv(enum CBLAS_TRANSPOSE t, int rows, int cols, float alpha, const float* a, int lda, const float* x,
                  int incx, float beta, float* y, int incy) {
  LUCID_CBLAS_SGEMV(CblasRowMajor, t, rows, cols, alpha, a, lda, x, incx, beta, y, incy);
}
inline void dgemv(enum CBLAS_TRANSPOSE t, int rows, int cols, double alpha, const double* a, int lda, const double* x,
                  int incx, double beta, double* y, int incy) {
  LUCID_CBLAS_DGEMV(CblasRowMajor, t, rows, cols, alpha, a, lda, x, incx, beta, y, incy);
}

// Row-major C[m, n] = alpha * op(A)[m, k] @ op(B)[k, n] + beta * C, where
// op reads the stored matrix transposed when trans_a / trans_b is set.
inline void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  check(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX,
        "matrix dimension too large for BLAS (32-bit indices)");
  if (k == 0) {  // an empty sum: BLAS implementations disagree on touching C here
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  follow_lucid_threads();
  if (vector_product(sgemv, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  LUCID_CBLAS_SGEMM(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                    static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda),
                    b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

// float64 (the CPU stream's float64 matmul), same contract as sgemm.
inline void dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                  int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  check(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX,
        "matrix dimension too large for BLAS (32-bit indices)");
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
    return;
  }
  follow_lucid_threads();
  if (vector_product(dgemv, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  LUCID_CBLAS_DGEMM(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                    static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda),
                    b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

// One name for both precisions, for kernels templated on the element type.
inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                 const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace lucid::blas
