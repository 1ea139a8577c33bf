// Matrix decompositions and solvers (torch.linalg's inv, solve, det, slogdet,
// cholesky, eigh / eigvalsh, svd / svdvals, qr, solve_triangular): argument
// validation, batch broadcasting, empty matrices and every error message
// live here; cpu:: (LAPACK) and gpu:: (mx::linalg on MLX's CPU device)
// compute and report LAPACK-style `info`, which this layer turns into
// LinAlgError with PyTorch's wording, so both streams raise the same words.
//
// Inputs: float32 or float64 tensors (…, m, n) (TypeError otherwise; the GPU
// stream holds no float64), at least 2-D and square where the routine needs it
// (ShapeError, which Python catches as ValueError or RuntimeError). A batched
// failure names its flat batch index: "(Batch element 3): ".
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace lucid::ops {

// The inverse of each square matrix of a (…, n, n).
Tensor inv(const Tensor& a);
// P A = L U (partial pivoting) of A (…, m, n): (LU packed, pivots (…, min(m, n))
// int32, 1-based as LAPACK's). With `check`, a zero diagonal element of U
// raises LinAlgError (linalg.lu_factor); without, it is returned (linalg.lu).
std::pair<Tensor, Tensor> lu_factor(const Tensor& a, bool check);
// A X = B (left) or X A = B; B is (…, n, k) or a vector (…, n) when B is 1-D
// or has A's shape without its last axis; batch axes broadcast.
Tensor solve(const Tensor& a, const Tensor& b, bool left);
// The determinant of each square matrix.
Tensor det(const Tensor& a);
// (sign, log|det|) of each square matrix.
std::pair<Tensor, Tensor> slogdet(const Tensor& a);
// The Cholesky factor L of each positive-definite matrix (U = L^T when `upper`).
Tensor cholesky(const Tensor& a, bool upper);
// Eigenvalues (ascending) and eigenvectors (as columns; undefined without
// `vectors`) of symmetric matrices, read from the `uplo` triangle.
std::pair<Tensor, Tensor> eigh(const Tensor& a, const std::string& uplo, bool vectors);
// Singular value decomposition: {U, S, Vh}, or {S} without `uv`.
std::vector<Tensor> svd(const Tensor& a, bool full_matrices, bool uv);
// QR decomposition (Q, R); mode "reduced" | "complete" | "r" ("r": Q is an
// empty (0,) tensor).
std::pair<Tensor, Tensor> qr(const Tensor& a, const std::string& mode);
// X with A X = B (left) or X A = B for triangular A (…, n, n); B (…, n, k)
// (left) or (…, k, n); batch axes broadcast.
Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular);

}  // namespace lucid::ops
