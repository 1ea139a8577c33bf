#include "ops/decomposition.h"

#include <algorithm>
#include <climits>
#include <functional>

#include "core/errors.h"
#include "cpu/decomposition.h"
#include "gpu/decomposition.h"
#include "ops/copy.h"
#include "ops/shape.h"

namespace lucid::ops {

namespace {

bool on_gpu(const Tensor& a) { return a.device() == Device::GPU; }

int64_t dim_at(const Tensor& t, int from_end) { return t.shape()[t.ndim() - from_end]; }

Shape batch_of(const Tensor& t, int drop = 2) { return Shape(t.shape().begin(), t.shape().end() - drop); }

Shape append(Shape s, std::initializer_list<int64_t> last) {
  s.insert(s.end(), last);
  return s;
}

// A float32 / float64 tensor with at least two axes (square if asked), each
// matrix dimension within LAPACK's 32-bit sizes.
void check_matrix(const char* fn, const Tensor& a, bool square, const char* name = "A") {
  if (a.ndim() < 2)
    throw ShapeError(std::string(fn) + ": The input tensor " + name + " must have at least 2 dimensions.");
  if (a.dtype() != DType::Float32 && a.dtype() != DType::Float64)
    throw TypeError(std::string(fn) + ": Expected a float32 or float64 tensor as " + name + ", got " +
                    dtype_name(a.dtype()));
  int64_t m = dim_at(a, 2), n = dim_at(a, 1);
  if (square && m != n)
    throw ShapeError(std::string(fn) + ": " + name + " must be batches of square matrices, but they are " +
                     std::to_string(m) + " by " + std::to_string(n) + " matrices");
  if (m > INT_MAX || n > INT_MAX)
    throw ValueError(std::string(fn) + ": matrix dimensions " + std::to_string(m) + " x " + std::to_string(n) +
                     " are too large for LAPACK (32-bit sizes)");
}

Tensor mT(const Tensor& x) {
  std::vector<int64_t> dims(x.ndim());
  for (int i = 0; i < x.ndim(); ++i) dims[i] = i;
  std::swap(dims[x.ndim() - 1], dims[x.ndim() - 2]);
  return permute(x, dims);
}

// Kernels take contiguous matrices (a no-op on the GPU stream).
Tensor dense(const Tensor& x) { return contiguous(x); }

// The first failing matrix's message, prefixed with its flat batch index when
// the input was batched (as PyTorch words it).
void raise_info(const char* fn, const std::vector<int>& info, bool batched,
                const std::function<std::string(int)>& message) {
  for (size_t b = 0; b < info.size(); ++b) {
    if (info[b] == 0) continue;
    std::string where = batched ? "(Batch element " + std::to_string(b) + "): " : "";
    throw LinAlgError(std::string(fn) + ": " + where + message(info[b]));
  }
}

// (…, n, n) identity matrices on `like`'s device and dtype.
Tensor eyes(const Shape& batch, int64_t n, const Tensor& like) {
  Shape s = append(batch, {n, n});
  Tensor t = Tensor::empty_cpu(s, like.dtype());
  int64_t count = lucid::numel(batch);
  for (int64_t b = 0; b < count; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t at = (b * n + i) * n + j;
        if (like.dtype() == DType::Float64)
          t.data<double>()[at] = i == j;
        else
          t.data<float>()[at] = i == j;
      }
  return to_device(t, like.device());
}

Tensor zeros_like_shape(const Shape& s, const Tensor& like) { return full(s, 0.0, like.dtype(), like.device()); }

// a and b broadcast over their batch axes (all but the last two), contiguous.
std::pair<Tensor, Tensor> broadcast_batches(const char* fn, const Tensor& a, const Tensor& b) {
  Shape batch;
  try {
    batch = broadcast_shapes(batch_of(a), batch_of(b), fn);
  } catch (const ValueError&) {
    throw ShapeError(std::string(fn) + ": the batch dimensions of A " + shape_str(a.shape()) + " and B " +
                     shape_str(b.shape()) + " cannot be broadcast together");
  }
  Tensor ax = expand(a, append(batch, {dim_at(a, 2), dim_at(a, 1)}));
  Tensor bx = expand(b, append(batch, {dim_at(b, 2), dim_at(b, 1)}));
  return {dense(ax), dense(bx)};
}

void check_pair(const char* fn, const Tensor& a, const Tensor& b) {
  common_device(fn, {&a, &b});
  if (a.dtype() != b.dtype())
    throw TypeError(std::string(fn) + ": Expected A and B to have the same dtype, but found A of type " +
                    dtype_name(a.dtype()) + " and B of type " + dtype_name(b.dtype()) + " instead");
}

}  // namespace

Tensor inv(const Tensor& a) {
  const char* fn = "linalg.inv";
  check_matrix(fn, a, true);
  if (a.numel() == 0) return empty(a.shape(), a.dtype(), a.device());
  Tensor x = dense(a);
  std::vector<int> info;
  Tensor out = on_gpu(x) ? gpu::inv(x, info) : cpu::inv(x, info);
  raise_info(fn, info, a.ndim() > 2, [](int i) {
    return "The diagonal element " + std::to_string(i) +
           " is zero, the inversion could not be completed because the input matrix is singular.";
  });
  return out;
}

std::pair<Tensor, Tensor> lu_factor(const Tensor& a, bool check) {
  const char* fn = check ? "linalg.lu_factor" : "linalg.lu";
  check_matrix(fn, a, false);
  int64_t k = std::min(dim_at(a, 2), dim_at(a, 1));
  if (a.numel() == 0)
    return {empty(a.shape(), a.dtype(), a.device()), empty(append(batch_of(a), {k}), DType::Int32, a.device())};
  Tensor x = dense(a);
  std::vector<int> info;
  auto out = on_gpu(x) ? gpu::lu_factor(x, info) : cpu::lu_factor(x, info);
  if (check)
    raise_info(fn, info, a.ndim() > 2, [](int i) {
      return "U[" + std::to_string(i) + "," + std::to_string(i) +
             "] is zero and using it on lu_solve would result in a division by zero. If you still want to "
             "perform the factorization, consider calling linalg.lu(A).";
    });
  return out;
}

Tensor solve(const Tensor& a, const Tensor& b, bool left) {
  const char* fn = "linalg.solve";
  check_matrix(fn, a, true);
  if (b.ndim() < 1) throw ShapeError(std::string(fn) + ": The input tensor B must have at least 1 dimension.");
  check_pair(fn, a, b);
  int64_t n = dim_at(a, 1);
  // PyTorch's vector case: B is 1-D, or A's shape without its last axis.
  bool vector = b.ndim() == 1 || (b.ndim() == a.ndim() - 1 && b.shape() == batch_of(a, 1));
  Tensor b2 = vector ? reshape(b, append(b.shape(), {1})) : b;  // a column, also for left=False (as PyTorch)
  if (!vector) check_matrix(fn, b, false, "B");
  if ((left ? dim_at(b2, 2) : dim_at(b2, 1)) != n)
    throw ShapeError(std::string(fn) + ": Incompatible shapes of A and B for the equation " +
                     (left ? "AX = B" : "XA = B") + " (" + std::to_string(n) + "x" + std::to_string(n) + " and " +
                     std::to_string(dim_at(b2, 2)) + "x" + std::to_string(dim_at(b2, 1)) + ")");
  // X A = B  <=>  A^T X^T = B^T: the right-hand form solves with transposes.
  Tensor a2 = left ? a : mT(a);
  if (!left) b2 = mT(b2);
  auto [ax, bx] = broadcast_batches(fn, a2, b2);
  Tensor out;
  if (ax.numel() == 0 || bx.numel() == 0) {
    out = zeros_like_shape(bx.shape(), bx);
  } else {
    std::vector<int> info;
    out = on_gpu(ax) ? gpu::solve(ax, bx, info) : cpu::solve(ax, bx, info);
    raise_info(fn, info, ax.ndim() > 2,
               [](int) { return std::string("The solver failed because the input matrix is singular."); });
  }
  if (!left) out = mT(out);
  return vector ? reshape(out, batch_of(out, 1)) : out;
}

Tensor det(const Tensor& a) {
  check_matrix("linalg.det", a, true);
  if (a.numel() == 0) return full(batch_of(a), 1.0, a.dtype(), a.device());  // empty product
  Tensor x = dense(a);
  return on_gpu(x) ? gpu::det(x) : cpu::det(x);
}

std::pair<Tensor, Tensor> slogdet(const Tensor& a) {
  check_matrix("linalg.slogdet", a, true);
  if (a.numel() == 0)
    return {full(batch_of(a), 1.0, a.dtype(), a.device()), full(batch_of(a), 0.0, a.dtype(), a.device())};
  Tensor x = dense(a);
  return on_gpu(x) ? gpu::slogdet(x) : cpu::slogdet(x);
}

Tensor cholesky(const Tensor& a, bool upper) {
  const char* fn = "linalg.cholesky";
  check_matrix(fn, a, true);
  if (a.numel() == 0) return empty(a.shape(), a.dtype(), a.device());
  Tensor x = dense(a);
  std::vector<int> info;
  Tensor out = on_gpu(x) ? gpu::cholesky(x, upper, info) : cpu::cholesky(x, upper, info);
  raise_info(fn, info, a.ndim() > 2, [](int i) {
    return "The factorization could not be completed because the input is not positive-definite (the leading "
           "minor of order " + std::to_string(i) + " is not positive-definite).";
  });
  return out;
}

std::pair<Tensor, Tensor> eigh(const Tensor& a, const std::string& uplo, bool vectors) {
  const char* fn = vectors ? "linalg.eigh" : "linalg.eigvalsh";
  if (uplo != "L" && uplo != "U")
    throw ValueError(std::string(fn) + ": Expected UPLO argument to be 'L' or 'U', but got " + uplo);
  check_matrix(fn, a, true);
  if (a.numel() == 0)
    return {empty(batch_of(a, 1), a.dtype(), a.device()), vectors ? empty(a.shape(), a.dtype(), a.device()) : Tensor()};
  Tensor x = dense(a);
  std::vector<int> info;
  auto out = on_gpu(x) ? gpu::eigh(x, uplo == "L", vectors, info) : cpu::eigh(x, uplo == "L", vectors, info);
  raise_info(fn, info, a.ndim() > 2, [](int i) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "eigenvalues (error code: " + std::to_string(i) + ").";
  });
  return out;
}

std::vector<Tensor> svd(const Tensor& a, bool full_matrices, bool uv) {
  const char* fn = "linalg.svd";  // svdvals's errors too, as PyTorch words them
  check_matrix(fn, a, false);
  int64_t m = dim_at(a, 2), n = dim_at(a, 1), k = std::min(m, n);
  Shape batch = batch_of(a);
  if (a.numel() == 0) {
    Tensor s = empty(append(batch, {k}), a.dtype(), a.device());
    if (!uv) return {s};
    if (!full_matrices)
      return {empty(append(batch, {m, k}), a.dtype(), a.device()), s,
              empty(append(batch, {k, n}), a.dtype(), a.device())};
    return {eyes(batch, m, a), s, eyes(batch, n, a)};
  }
  Tensor x = dense(a);
  std::vector<int> info;
  auto out = on_gpu(x) ? gpu::svd(x, full_matrices, uv, info) : cpu::svd(x, full_matrices, uv, info);
  raise_info(fn, info, a.ndim() > 2, [](int i) {
    if (i < 0)
      return std::string("The algorithm failed to converge because the input matrix contained non-finite values.");
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "singular values (error code: " + std::to_string(i) + ").";
  });
  return out;
}

std::pair<Tensor, Tensor> qr(const Tensor& a, const std::string& mode) {
  const char* fn = "linalg.qr";
  if (mode != "reduced" && mode != "complete" && mode != "r")
    throw ValueError(std::string(fn) + ": qr received unrecognized mode '" + mode +
                     "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_matrix(fn, a, false);
  bool complete = mode == "complete", want_q = mode != "r";
  int64_t m = dim_at(a, 2), n = dim_at(a, 1), k = std::min(m, n);
  Shape batch = batch_of(a);
  Tensor no_q = empty({0}, a.dtype(), a.device());
  if (a.numel() == 0) {
    Tensor r = zeros_like_shape(append(batch, {complete ? m : k, n}), a);
    if (!want_q) return {no_q, r};
    return {complete ? eyes(batch, m, a) : empty(append(batch, {m, k}), a.dtype(), a.device()), r};
  }
  Tensor x = dense(a);
  auto [q, r] = on_gpu(x) ? gpu::qr(x, complete, want_q) : cpu::qr(x, complete, want_q);
  return {want_q ? q : no_q, r};
}

Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular) {
  const char* fn = "linalg.solve_triangular";
  check_matrix(fn, a, true);
  check_matrix(fn, b, false, "B");
  check_pair(fn, a, b);
  int64_t n = dim_at(a, 1);
  int64_t bn = left ? dim_at(b, 2) : dim_at(b, 1);
  if (bn != n)
    throw ShapeError(std::string(fn) + ": Incompatible shapes of A and B for the equation " +
                     (left ? "AX = B" : "XA = B") + " (" + std::to_string(n) + "x" + std::to_string(n) + " and " +
                     std::to_string(dim_at(b, 2)) + "x" + std::to_string(dim_at(b, 1)) + ")");
  // X A = B  <=>  A^T X^T = B^T, and A^T is triangular on the other side.
  auto [ax, bx] = broadcast_batches(fn, left ? a : mT(a), left ? b : mT(b));
  bool up = left ? upper : !upper;
  Tensor out;
  if (ax.numel() == 0 || bx.numel() == 0) {
    out = zeros_like_shape(bx.shape(), bx);
  } else {
    std::vector<int> info;
    out = on_gpu(ax) ? gpu::solve_triangular(ax, bx, up, unitriangular, info)
                     : cpu::solve_triangular(ax, bx, up, unitriangular, info);
    raise_info(fn, info, ax.ndim() > 2, [](int i) {
      return "The diagonal element " + std::to_string(i) +
             " is zero, the solve could not be completed because the input matrix is singular.";
    });
  }
  return left ? out : mT(out);
}

}  // namespace lucid::ops
