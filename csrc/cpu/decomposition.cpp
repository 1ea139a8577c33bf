#include "cpu/decomposition.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.h"
#include "cpu/blas.h"
#include "cpu/lapack.h"

// LAPACK reads column-major storage. A row-major (m, n) buffer is the
// column-major (n, m) transpose, so routines whose answer is the same for A^T
// (det, a symmetric matrix's triangle, the SVD read with U and V swapped) take
// the buffer as it is; the rest get a transposed copy (O(n^2) beside the
// O(n^3) factorization).

namespace lucid::cpu {

namespace {

struct Mat {
  int64_t batch, m, n;
};

Mat dims_of(const Tensor& t) {
  int nd = t.ndim();
  int64_t m = t.shape()[nd - 2], n = t.shape()[nd - 1];
  return {t.numel() / (m * n), m, n};
}

Shape with_last(const Tensor& t, std::initializer_list<int64_t> last) {
  Shape s(t.shape().begin(), t.shape().end() - 2);
  s.insert(s.end(), last);
  return s;
}

// dst (column-major, leading dimension rows) = the row-major (rows, cols) src.
template <class T>
void to_col_major(const T* src, int64_t rows, int64_t cols, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i + j * rows] = src[i * cols + j];
}
template <class T>
void from_col_major(const T* src, int64_t rows, int64_t cols, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = src[i + j * rows];
}

template <class F>
void by_dtype(const Tensor& t, F&& f) {
  if (t.dtype() == DType::Float64)
    f(double{});
  else
    f(float{});
}

}  // namespace

Tensor inv(const Tensor& a, std::vector<int>& info) {
  Mat d = dims_of(a);
  int n = lapack::dim(d.n, "linalg.inv");
  Tensor out = Tensor::empty_cpu(a.shape(), a.dtype());
  info.assign(d.batch, 0);
  blas::follow_lucid_threads();
  by_dtype(a, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> col(static_cast<size_t>(d.n * d.n));
    std::vector<int> ipiv(n);
    T query = 0;
    lapack::getri(n, col.data(), n, ipiv.data(), &query, -1);
    std::vector<T> work(lapack::work_size(query));
    for (int64_t b = 0; b < d.batch; ++b) {
      const T* src = a.data<T>() + b * d.n * d.n;
      T* dst = out.data<T>() + b * d.n * d.n;
      to_col_major(src, d.n, d.n, col.data());
      info[b] = lapack::getrf(n, n, col.data(), n, ipiv.data());
      if (info[b] != 0) continue;
      lapack::getri(n, col.data(), n, ipiv.data(), work.data(), static_cast<int>(work.size()));
      from_col_major(col.data(), d.n, d.n, dst);
    }
  });
  return out;
}

std::pair<Tensor, Tensor> lu_factor(const Tensor& a, std::vector<int>& info) {
  Mat d = dims_of(a);
  int m = lapack::dim(d.m, "linalg.lu_factor"), n = lapack::dim(d.n, "linalg.lu_factor");
  int k = std::min(m, n);
  Tensor lu = Tensor::empty_cpu(a.shape(), a.dtype());
  Shape piv_shape(a.shape().begin(), a.shape().end() - 2);
  piv_shape.push_back(k);
  Tensor piv = Tensor::empty_cpu(piv_shape, DType::Int32);
  info.assign(d.batch, 0);
  blas::follow_lucid_threads();
  by_dtype(a, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> col(static_cast<size_t>(d.m * d.n));
    for (int64_t b = 0; b < d.batch; ++b) {
      // The LU of A itself (not of the buffer's A^T): a column-major copy.
      to_col_major(a.data<T>() + b * d.m * d.n, d.m, d.n, col.data());
      info[b] = lapack::getrf(m, n, col.data(), m, piv.data<int32_t>() + b * k);
      from_col_major(col.data(), d.m, d.n, lu.data<T>() + b * d.m * d.n);
    }
  });
  return {lu, piv};
}

Tensor solve(const Tensor& a, const Tensor& b, std::vector<int>& info) {
  Mat da = dims_of(a), db = dims_of(b);
  int n = lapack::dim(da.n, "linalg.solve"), k = lapack::dim(db.n, "linalg.solve");
  Tensor out = Tensor::empty_cpu(b.shape(), b.dtype());
  info.assign(da.batch, 0);
  blas::follow_lucid_threads();
  by_dtype(a, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> lu(static_cast<size_t>(da.n * da.n)), rhs(static_cast<size_t>(db.m * db.n));
    std::vector<int> ipiv(n);
    for (int64_t i = 0; i < da.batch; ++i) {
      // The row-major buffer is A^T column-major: factor it as is and solve
      // with its transpose (trans = 'T'), which is A.
      std::copy_n(a.data<T>() + i * da.n * da.n, lu.size(), lu.data());
      info[i] = lapack::getrf(n, n, lu.data(), n, ipiv.data());
      if (info[i] != 0) continue;
      to_col_major(b.data<T>() + i * db.m * db.n, db.m, db.n, rhs.data());
      lapack::getrs('T', n, k, lu.data(), n, ipiv.data(), rhs.data(), n);
      from_col_major(rhs.data(), db.m, db.n, out.data<T>() + i * db.m * db.n);
    }
  });
  return out;
}

namespace {

// getrf of A^T (the buffer as is: det A^T = det A), then calls
// f(b, diagonal pointer with stride n + 1, number of row swaps).
template <class T, class F>
void lu_diagonals(const Tensor& a, const char* fn, F&& f) {
  Mat d = dims_of(a);
  int n = lapack::dim(d.n, fn);
  std::vector<T> lu(static_cast<size_t>(d.n * d.n));
  std::vector<int> ipiv(n);
  blas::follow_lucid_threads();
  for (int64_t b = 0; b < d.batch; ++b) {
    std::copy_n(a.data<T>() + b * d.n * d.n, lu.size(), lu.data());
    lapack::getrf(n, n, lu.data(), n, ipiv.data());  // info > 0: a zero pivot, det 0, handled below
    int swaps = 0;
    for (int i = 0; i < n; ++i) swaps += ipiv[i] != i + 1;
    f(b, lu.data(), swaps);
  }
}

}  // namespace

Tensor det(const Tensor& a) {
  Mat d = dims_of(a);
  Tensor out = Tensor::empty_cpu(Shape(a.shape().begin(), a.shape().end() - 2), a.dtype());
  by_dtype(a, [&](auto zero) {
    using T = decltype(zero);
    lu_diagonals<T>(a, "linalg.det", [&](int64_t b, const T* lu, int swaps) {
      T p = swaps % 2 ? T(-1) : T(1);
      for (int64_t i = 0; i < d.n; ++i) p *= lu[i * (d.n + 1)];
      out.data<T>()[b] = p;
    });
  });
  return out;
}

std::pair<Tensor, Tensor> slogdet(const Tensor& a) {
  Mat d = dims_of(a);
  Shape batch(a.shape().begin(), a.shape().end() - 2);
  Tensor sign = Tensor::empty_cpu(batch, a.dtype()), logabs = Tensor::empty_cpu(batch, a.dtype());
  by_dtype(a, [&](auto zero) {
    using T = decltype(zero);
    lu_diagonals<T>(a, "linalg.slogdet", [&](int64_t b, const T* lu, int swaps) {
      T s = swaps % 2 ? T(-1) : T(1), l = 0;
      for (int64_t i = 0; i < d.n; ++i) {
        T u = lu[i * (d.n + 1)];
        if (u < 0) s = -s;
        if (u == 0) s = 0;
        l += std::log(std::abs(u));
      }
      sign.data<T>()[b] = s;
      logabs.data<T>()[b] = l;
    });
  });
  return {sign, logabs};
}

Tensor cholesky(const Tensor& a, bool upper, std::vector<int>& info) {
  Mat d = dims_of(a);
  int n = lapack::dim(d.n, "linalg.cholesky");
  Tensor out = Tensor::empty_cpu(a.shape(), a.dtype());
  info.assign(d.batch, 0);
  blas::follow_lucid_threads();
  by_dtype(a, [&](auto zero) {
    using T = decltype(zero);
    for (int64_t b = 0; b < d.batch; ++b) {
      T* x = out.data<T>() + b * d.n * d.n;
      std::copy_n(a.data<T>() + b * d.n * d.n, d.n * d.n, x);
      // Row-major lower is column-major upper: potrf('U') gives U with
      // A = U^T U column-major, read row-major as L = U^T.
      info[b] = lapack::potrf(upper ? 'L' : 'U', n, x, n);
      // OpenBLAS's potrf lets a NaN pivot through (reference LAPACK, and so
      // PyTorch and the GPU stream's check, stop there): the first diagonal
      // element that is not > 0 is the failing minor.
      for (int64_t i = 0; info[b] == 0 && i < d.n; ++i)
        if (!(x[i * (d.n + 1)] > T(0))) info[b] = static_cast<int>(i + 1);
      for (int64_t i = 0; i < d.n; ++i)
        for (int64_t j = 0; j < d.n; ++j)
          if (upper ? j < i : j > i) x[i * d.n + j] = 0;
    }
  });
  return out;
}

std::pair<Tensor, Tensor> eigh(const Tensor& a, bool lower, bool vectors, std::vector<int>& info) {
  Mat d = dims_of(a);
  int n = lapack::dim(d.n, "linalg.eigh");
  Tensor w = Tensor::empty_cpu(Shape(a.shape().begin(), a.shape().end() - 1), a.dtype());  // (…, n)
  Tensor v = vectors ? Tensor::empty_cpu(a.shape(), a.dtype()) : Tensor();
  info.assign(d.batch, 0);
  blas::follow_lucid_threads();
  by_dtype(a, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> x(static_cast<size_t>(d.n * d.n));
    char jobz = vectors ? 'V' : 'N', uplo = lower ? 'U' : 'L';  // row-major lower = column-major upper
    T wq = 0;
    int iwq = 0;
    lapack::syevd(jobz, uplo, n, x.data(), n, w.data<T>(), &wq, -1, &iwq, -1);
    std::vector<T> work(lapack::work_size(wq));
    std::vector<int> iwork(std::max(iwq, 1));
    for (int64_t b = 0; b < d.batch; ++b) {
      std::copy_n(a.data<T>() + b * d.n * d.n, x.size(), x.data());
      info[b] = lapack::syevd(jobz, uplo, n, x.data(), n, w.data<T>() + b * d.n, work.data(),
                              static_cast<int>(work.size()), iwork.data(), static_cast<int>(iwork.size()));
      // Column-major eigenvectors as columns: the row-major buffer holds V^T.
      if (vectors) from_col_major(x.data(), d.n, d.n, v.data<T>() + b * d.n * d.n);
    }
  });
  return {w, v};
}

std::vector<Tensor> svd(const Tensor& a, bool full, bool uv, std::vector<int>& info) {
  Mat d = dims_of(a);
  int m = lapack::dim(d.m, "linalg.svd"), n = lapack::dim(d.n, "linalg.svd");
  int k = std::min(m, n);
  int ucols = full ? m : k, vrows = full ? n : k;
  Shape s_shape(a.shape().begin(), a.shape().end() - 2);
  s_shape.push_back(k);
  Tensor s = Tensor::empty_cpu(s_shape, a.dtype());
  Tensor u = uv ? Tensor::empty_cpu(with_last(a, {d.m, ucols}), a.dtype()) : Tensor();
  Tensor vh = uv ? Tensor::empty_cpu(with_last(a, {vrows, d.n}), a.dtype()) : Tensor();
  info.assign(d.batch, 0);
  blas::follow_lucid_threads();
  by_dtype(a, [&](auto zero) {
    using T = decltype(zero);
    // The buffer is A^T (n, m) column-major; A^T = U' S V'^T gives A = V' S U'^T,
    // and LAPACK's column-major U' (n, ·) and V'^T (·, m) read row-major are
    // exactly Vh and U: they are written straight into vh and u.
    std::vector<T> x(static_cast<size_t>(d.m * d.n));
    std::vector<int> iwork(static_cast<size_t>(8) * std::max(k, 1));
    char jobz = !uv ? 'N' : full ? 'A' : 'S';
    T one_u = 0, one_v = 0;
    T wq = 0;
    lapack::gesdd(jobz, n, m, x.data(), n, s.data<T>(), uv ? vh.data<T>() : &one_u, uv ? n : 1,
                  uv ? u.data<T>() : &one_v, uv ? (full ? m : k) : 1, &wq, -1, iwork.data());
    std::vector<T> work(lapack::work_size(wq));
    for (int64_t b = 0; b < d.batch; ++b) {
      std::copy_n(a.data<T>() + b * d.m * d.n, x.size(), x.data());
      if (!std::all_of(x.begin(), x.end(), [](T v) { return std::isfinite(v); })) {
        info[b] = -1;  // gesdd would reject NaN (or loop on it, in some LAPACKs)
        continue;
      }
      T* vh_b = uv ? vh.data<T>() + b * vrows * d.n : &one_u;
      T* u_b = uv ? u.data<T>() + b * d.m * ucols : &one_v;
      info[b] = lapack::gesdd(jobz, n, m, x.data(), n, s.data<T>() + b * k, vh_b, uv ? n : 1, u_b,
                              uv ? (full ? m : k) : 1, work.data(), static_cast<int>(work.size()), iwork.data());
    }
  });
  if (!uv) return {s};
  return {u, s, vh};
}

std::pair<Tensor, Tensor> qr(const Tensor& a, bool complete, bool want_q) {
  Mat d = dims_of(a);
  int m = lapack::dim(d.m, "linalg.qr"), n = lapack::dim(d.n, "linalg.qr");
  int k = std::min(m, n);
  int qcols = complete ? m : k, rrows = complete ? m : k;
  Tensor q = want_q ? Tensor::empty_cpu(with_last(a, {d.m, qcols}), a.dtype()) : Tensor();
  Tensor r = Tensor::empty_cpu(with_last(a, {rrows, d.n}), a.dtype());
  blas::follow_lucid_threads();
  by_dtype(a, [&](auto zero) {
    using T = decltype(zero);
    // Column-major copy with room for m columns when the complete Q needs them.
    int cols = std::max(n, want_q ? qcols : 0);
    std::vector<T> x(static_cast<size_t>(d.m) * cols), tau(std::max(k, 1));
    T wq = 0, oq = 0;
    lapack::geqrf(m, n, x.data(), m, tau.data(), &wq, -1);
    if (want_q) lapack::orgqr(m, qcols, k, x.data(), m, tau.data(), &oq, -1);
    std::vector<T> work(std::max(lapack::work_size(wq), lapack::work_size(oq)));
    int lwork = static_cast<int>(work.size());
    for (int64_t b = 0; b < d.batch; ++b) {
      to_col_major(a.data<T>() + b * d.m * d.n, d.m, d.n, x.data());
      lapack::geqrf(m, n, x.data(), m, tau.data(), work.data(), lwork);
      T* rb = r.data<T>() + b * rrows * d.n;
      for (int64_t i = 0; i < rrows; ++i)
        for (int64_t j = 0; j < d.n; ++j) rb[i * d.n + j] = j >= i ? x[i + j * d.m] : T(0);
      if (!want_q) continue;
      lapack::orgqr(m, qcols, k, x.data(), m, tau.data(), work.data(), lwork);
      from_col_major(x.data(), d.m, qcols, q.data<T>() + b * d.m * qcols);
    }
  });
  return {q, r};
}

Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool unit, std::vector<int>& info) {
  Mat da = dims_of(a), db = dims_of(b);
  int n = lapack::dim(da.n, "linalg.solve_triangular"), k = lapack::dim(db.n, "linalg.solve_triangular");
  Tensor out = Tensor::empty_cpu(b.shape(), b.dtype());
  info.assign(da.batch, 0);
  blas::follow_lucid_threads();
  by_dtype(a, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> rhs(static_cast<size_t>(db.m * db.n));
    for (int64_t i = 0; i < da.batch; ++i) {
      // The buffer is A^T column-major (its upper triangle is A's lower):
      // solve with its transpose.
      to_col_major(b.data<T>() + i * db.m * db.n, db.m, db.n, rhs.data());
      info[i] = lapack::trtrs(upper ? 'L' : 'U', 'T', unit ? 'U' : 'N', n, k, a.data<T>() + i * da.n * da.n, n,
                              rhs.data(), n);
      if (info[i] == 0) from_col_major(rhs.data(), db.m, db.n, out.data<T>() + i * db.m * db.n);
    }
  });
  return out;
}

}  // namespace lucid::cpu
