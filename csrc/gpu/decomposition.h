// GPU-stream matrix decompositions and solvers: MLX's mx::linalg, which runs
// only on MLX's CPU device (every call passes mx::Device::cpu, whatever device
// the GPU stream uses). Same contract as cpu/decomposition.h: ops validates,
// hands over non-empty float32 / float64 matrices, and raises from `info`.
#pragma once
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace lucid::gpu {

// info for inv / solve: the 1-based index of the first zero on the diagonal
// of U from mx::linalg::lu_factor / lu (the singular case, checked before
// MLX's inv / triangular solves, which would throw from inside evaluation); an
// undefined result when any is nonzero.
Tensor inv(const Tensor& a, std::vector<int>& info);
Tensor solve(const Tensor& a, const Tensor& b, std::vector<int>& info);
// mx::linalg::lu_factor, its 0-based uint32 pivots made LAPACK's 1-based int32.
std::pair<Tensor, Tensor> lu_factor(const Tensor& a, std::vector<int>& info);
Tensor det(const Tensor& a);
std::pair<Tensor, Tensor> slogdet(const Tensor& a);
// info: the first diagonal element of MLX's factor that is not positive (MLX
// does not report potrf's info; the failing pivot is left there, <= 0 or NaN).
Tensor cholesky(const Tensor& a, bool upper, std::vector<int>& info);
std::pair<Tensor, Tensor> eigh(const Tensor& a, bool lower, bool vectors, std::vector<int>& info);
// info -1: the matrix holds NaN or infinity (not factored); > 0: gesdd did not converge.
std::vector<Tensor> svd(const Tensor& a, bool full, bool uv, std::vector<int>& info);
std::pair<Tensor, Tensor> qr(const Tensor& a, bool complete, bool want_q);
// info: the index of a zero diagonal element (not checked with `unit`).
Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool unit, std::vector<int>& info);

}  // namespace lucid::gpu
