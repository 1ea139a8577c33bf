// The one place that names the LAPACK implementation (as blas.h does for
// CBLAS): Accelerate on macOS, scipy-openblas32 elsewhere, whose Fortran
// symbols carry a `scipy_` prefix (`scipy_sgetrf_`). Kernels call the
// overloaded wrappers below (lucid::lapack::getrf …, float and double) and
// never name a LAPACK symbol themselves.
//
// LAPACK is column-major and takes 32-bit sizes: callers pass int sizes they
// have checked with lapack::dim(), and read `info` from the return value.
//
// Read-only arrays are passed through const_cast, so the calls compile
// whether a header declares them const or not.
//
// macOS branch: not built here (no macOS host in CI). It only swaps each
// symbol for Accelerate's `sgetrf_`-style name, which under
// ACCELERATE_NEW_LAPACK (set in CMakeLists.txt) has the same argument list
// with int sizes and no hidden string lengths; nothing else differs.
#pragma once
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.h"

#ifdef LUCID_USE_ACCELERATE
#include <Accelerate/Accelerate.h>
#define LUCID_LAPACK(name) name##_
#define LUCID_STRLEN1
#define LUCID_STRLEN2
#define LUCID_STRLEN3
#else
// gfortran's ABI: every character argument adds a hidden length at the end.
#define LUCID_LAPACK(name) scipy_##name##_
#define LUCID_STRLEN1 , size_t
#define LUCID_STRLEN2 , size_t, size_t
#define LUCID_STRLEN3 , size_t, size_t, size_t
extern "C" {
#define LUCID_DECLARE(T, p)                                                                                          \
  void scipy_##p##getrf_(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);                   \
  void scipy_##p##getri_(const int* n, T* a, const int* lda, const int* ipiv, T* work, const int* lwork,            \
                         int* info);                                                                                 \
  void scipy_##p##getrs_(const char* trans, const int* n, const int* nrhs, const T* a, const int* lda,              \
                         const int* ipiv, T* b, const int* ldb, int* info LUCID_STRLEN1);                            \
  void scipy_##p##potrf_(const char* uplo, const int* n, T* a, const int* lda, int* info LUCID_STRLEN1);            \
  void scipy_##p##syevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, T* work,     \
                         const int* lwork, int* iwork, const int* liwork, int* info LUCID_STRLEN2);                  \
  void scipy_##p##gesdd_(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u,           \
                         const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork, int* iwork, int* info   \
                             LUCID_STRLEN1);                                                                         \
  void scipy_##p##geqrf_(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork,       \
                         int* info);                                                                                 \
  void scipy_##p##orgqr_(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work,     \
                         const int* lwork, int* info);                                                               \
  void scipy_##p##trtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs,     \
                         const T* a, const int* lda, T* b, const int* ldb, int* info LUCID_STRLEN3);
LUCID_DECLARE(float, s)
LUCID_DECLARE(double, d)
#undef LUCID_DECLARE
}
#undef LUCID_STRLEN1
#undef LUCID_STRLEN2
#undef LUCID_STRLEN3
#define LUCID_STRLEN1 , size_t{1}
#define LUCID_STRLEN2 , size_t{1}, size_t{1}
#define LUCID_STRLEN3 , size_t{1}, size_t{1}, size_t{1}
#endif

namespace lucid::lapack {

// A size as LAPACK's 32-bit int; ValueError naming `fn` when it does not fit.
inline int dim(int64_t v, const char* fn) {
  check(v >= 0 && v <= INT_MAX, std::string(fn) + ": matrix dimension " + std::to_string(v) +
                                    " is too large for LAPACK (32-bit sizes)");
  return static_cast<int>(v);
}

// A workspace size LAPACK reported in a float (queries with lwork = -1);
// ValueError when it does not fit LAPACK's int.
inline int work_size(double w) {
  check(w < static_cast<double>(INT_MAX), "LAPACK workspace of " + std::to_string(w) +
                                              " elements is too large for its 32-bit sizes");
  return w < 1.0 ? 1 : static_cast<int>(w);
}

#define LUCID_WRAP(T, p)                                                                                             \
  inline int getrf(int m, int n, T* a, int lda, int* ipiv) {                                                         \
    int info = 0;                                                                                                    \
    LUCID_LAPACK(p##getrf)(&m, &n, a, &lda, ipiv, &info);                                                            \
    return info;                                                                                                     \
  }                                                                                                                  \
  inline int getri(int n, T* a, int lda, const int* ipiv, T* work, int lwork) {                                      \
    int info = 0;                                                                                                    \
    LUCID_LAPACK(p##getri)(&n, a, &lda, const_cast<int*>(ipiv), work, &lwork, &info);                              \
    return info;                                                                                                     \
  }                                                                                                                  \
  inline int getrs(char trans, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb) {               \
    int info = 0;                                                                                                    \
    LUCID_LAPACK(p##getrs)(&trans, &n, &nrhs, const_cast<T*>(a), &lda, const_cast<int*>(ipiv), b, &ldb,            \
                           &info LUCID_STRLEN1);                                                                     \
    return info;                                                                                                     \
  }                                                                                                                  \
  inline int potrf(char uplo, int n, T* a, int lda) {                                                                \
    int info = 0;                                                                                                    \
    LUCID_LAPACK(p##potrf)(&uplo, &n, a, &lda, &info LUCID_STRLEN1);                                                 \
    return info;                                                                                                     \
  }                                                                                                                  \
  inline int syevd(char jobz, char uplo, int n, T* a, int lda, T* w, T* work, int lwork, int* iwork, int liwork) {   \
    int info = 0;                                                                                                    \
    LUCID_LAPACK(p##syevd)(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info LUCID_STRLEN2);         \
    return info;                                                                                                     \
  }                                                                                                                  \
  inline int gesdd(char jobz, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt, T* work, int lwork, \
                   int* iwork) {                                                                                     \
    int info = 0;                                                                                                    \
    LUCID_LAPACK(p##gesdd)(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info LUCID_STRLEN1); \
    return info;                                                                                                     \
  }                                                                                                                  \
  inline int geqrf(int m, int n, T* a, int lda, T* tau, T* work, int lwork) {                                        \
    int info = 0;                                                                                                    \
    LUCID_LAPACK(p##geqrf)(&m, &n, a, &lda, tau, work, &lwork, &info);                                               \
    return info;                                                                                                     \
  }                                                                                                                  \
  inline int orgqr(int m, int n, int k, T* a, int lda, const T* tau, T* work, int lwork) {                           \
    int info = 0;                                                                                                    \
    LUCID_LAPACK(p##orgqr)(&m, &n, &k, a, &lda, const_cast<T*>(tau), work, &lwork, &info);                         \
    return info;                                                                                                     \
  }                                                                                                                  \
  inline int trtrs(char uplo, char trans, char diag, int n, int nrhs, const T* a, int lda, T* b, int ldb) {          \
    int info = 0;                                                                                                    \
    LUCID_LAPACK(p##trtrs)(&uplo, &trans, &diag, &n, &nrhs, const_cast<T*>(a), &lda, b, &ldb,                      \
                           &info LUCID_STRLEN3);                                                                     \
    return info;                                                                                                     \
  }
LUCID_WRAP(float, s)
LUCID_WRAP(double, d)
#undef LUCID_WRAP

}  // namespace lucid::lapack
