// CPU-stream matrix decompositions and solvers through LAPACK (cpu/lapack.h).
// ops/decomposition.cpp validates and hands over contiguous float32 / float64
// tensors of shape (batch..., m, n) with a non-empty batch and non-empty
// matrices; a and b share their batch axes. Functions that can fail on a
// value fill `info` with one LAPACK info per matrix (0: fine) and leave the
// message to ops.
#pragma once
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace lucid::cpu {

// inv(A) through getrf + getri on A (column-major copy); info: getrf's (the
// 1-based index of the first zero diagonal element of U).
Tensor inv(const Tensor& a, std::vector<int>& info);
// P A = L U with partial pivoting (getrf) of a (…, m, n): {LU packed as
// LAPACK leaves it, pivots (…, min(m, n)) int32, 1-based row swaps}; info:
// getrf's (the 1-based index of the first zero diagonal element of U).
std::pair<Tensor, Tensor> lu_factor(const Tensor& a, std::vector<int>& info);
// X with A X = B, a (…, n, n), b (…, n, k); info nonzero for a singular A.
Tensor solve(const Tensor& a, const Tensor& b, std::vector<int>& info);
// det and (sign, log|det|) from getrf's U and pivots; singular: 0 and (0, -inf).
Tensor det(const Tensor& a);
std::pair<Tensor, Tensor> slogdet(const Tensor& a);
// The Cholesky factor of the triangle named by `upper` (L with A = L L^T, or
// U with A = U^T U), the other triangle zero; info: potrf's (the order of the
// first leading minor that is not positive-definite).
Tensor cholesky(const Tensor& a, bool upper, std::vector<int>& info);
// Eigenvalues (ascending) and, with `vectors`, eigenvectors as columns, of the
// symmetric matrix stored in the lower (or upper) triangle (syevd).
std::pair<Tensor, Tensor> eigh(const Tensor& a, bool lower, bool vectors, std::vector<int>& info);
// gesdd: {U, S, Vh} (full or reduced), or {S} without `uv`.
// info -1: the matrix holds NaN or infinity (not factored); > 0: gesdd did not converge.
std::vector<Tensor> svd(const Tensor& a, bool full, bool uv, std::vector<int>& info);
// geqrf + orgqr: {Q, R}; Q (…, m, m) with `complete`, else (…, m, k); no Q
// (an undefined tensor) without `want_q`. R is (…, m, n) when complete.
std::pair<Tensor, Tensor> qr(const Tensor& a, bool complete, bool want_q);
// trtrs: X with A X = B for triangular A (`upper`, `unit` diagonal); info:
// the index of a zero diagonal element.
Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool unit, std::vector<int>& info);

}  // namespace lucid::cpu
