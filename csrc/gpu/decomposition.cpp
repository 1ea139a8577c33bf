#include "gpu/decomposition.h"

#include <algorithm>

#include "gpu/array.h"

namespace lucid::gpu {

namespace {

// MLX's linalg primitives are implemented only on its CPU device.
mx::StreamOrDevice on_cpu() { return mx::Device(mx::Device::cpu); }

// Per matrix of m (…, n, n): the 1-based index of the first diagonal element
// that is zero (or, with `nonpositive`, not > 0, which NaN is not), 0 when
// none. Evaluates m.
std::vector<int> first_bad_diagonal(const mx::array& m, bool nonpositive) {
  auto s = on_cpu();
  mx::array d = mx::diagonal(m, 0, -2, -1, s);
  mx::array bad = nonpositive ? mx::logical_not(mx::greater(d, mx::array(0.0f, d.dtype()), s), s)
                              : mx::equal(d, mx::array(0.0f, d.dtype()), s);
  mx::array first = mx::add(mx::astype(mx::argmax(bad, -1, false, s), mx::int32, s), mx::array(1, mx::int32), s);
  mx::array info = mx::reshape(mx::where(mx::any(bad, -1, false, s), first, mx::array(0, mx::int32), s), {-1}, s);
  info = mx::contiguous(info, false, s);
  mx::eval(info);
  const int32_t* p = info.data<int32_t>();
  return std::vector<int>(p, p + info.size());
}

// Per matrix of m (…, r, c): -1 when it holds a NaN or an infinity, else 0.
std::vector<int> nonfinite_matrices(const mx::array& m) {
  auto s = on_cpu();
  mx::array ok = mx::all(mx::isfinite(m, s), std::vector<int>{-2, -1}, false, s);
  mx::array info = mx::reshape(mx::where(ok, mx::array(0, mx::int32), mx::array(-1, mx::int32), s), {-1}, s);
  info = mx::contiguous(info, false, s);
  mx::eval(info);
  const int32_t* p = info.data<int32_t>();
  return std::vector<int>(p, p + info.size());
}

bool any_nonzero(const std::vector<int>& info) {
  return std::any_of(info.begin(), info.end(), [](int i) { return i != 0; });
}

// The last two axes of x sliced to [0, rows) x [0, cols).
mx::array top_left_block(const mx::array& x, int rows, int cols) {
  mx::Shape start(x.ndim(), 0), stop = x.shape();
  stop[x.ndim() - 2] = rows;
  stop[x.ndim() - 1] = cols;
  return mx::slice(x, start, stop, on_cpu());
}

}  // namespace

Tensor inv(const Tensor& a, std::vector<int>& info) {
  const mx::array& x = array_of(a);
  info = first_bad_diagonal(mx::linalg::lu_factor(x, on_cpu()).first, false);
  if (any_nonzero(info)) return Tensor();
  return wrap(mx::linalg::inv(x, on_cpu()));
}

std::pair<Tensor, Tensor> lu_factor(const Tensor& a, std::vector<int>& info) {
  auto s = on_cpu();
  auto [lu, piv] = mx::linalg::lu_factor(array_of(a), s);
  info = first_bad_diagonal(lu, false);
  return {wrap(lu), wrap(mx::add(mx::astype(piv, mx::int32, s), mx::array(1, mx::int32), s))};
}

Tensor solve(const Tensor& a, const Tensor& b, std::vector<int>& info) {
  // mx::linalg::solve's own steps (P A = L U, then two triangular solves) on one
  // factorization, whose U the singular check has already evaluated.
  auto s = on_cpu();
  std::vector<mx::array> plu = mx::linalg::lu(array_of(a), s);  // {row permutation, L, U}
  info = first_bad_diagonal(plu[2], false);
  if (any_nonzero(info)) return Tensor();
  mx::array rows = mx::expand_dims(mx::argsort(plu[0], -1, s), -1, s);
  mx::array pb = mx::take_along_axis(array_of(b), rows, -2, s);
  mx::array y = mx::linalg::solve_triangular(plu[1], pb, /*upper=*/false, s);
  return wrap(mx::linalg::solve_triangular(plu[2], y, /*upper=*/true, s));
}

Tensor det(const Tensor& a) { return wrap(mx::linalg::det(array_of(a), on_cpu())); }

std::pair<Tensor, Tensor> slogdet(const Tensor& a) {
  auto [sign, logabs] = mx::linalg::slogdet(array_of(a), on_cpu());
  return {wrap(sign), wrap(logabs)};
}

Tensor cholesky(const Tensor& a, bool upper, std::vector<int>& info) {
  mx::array c = mx::linalg::cholesky(array_of(a), upper, on_cpu());
  info = first_bad_diagonal(c, true);
  return wrap(c);
}

std::pair<Tensor, Tensor> eigh(const Tensor& a, bool lower, bool vectors, std::vector<int>& info) {
  const mx::array& x = array_of(a);
  info.assign(1, 0);  // MLX raises from evaluation when syevd does not converge
  if (!vectors) return {wrap(mx::linalg::eigvalsh(x, lower ? "L" : "U", on_cpu())), Tensor()};
  auto [w, v] = mx::linalg::eigh(x, lower ? "L" : "U", on_cpu());
  return {wrap(w), wrap(v)};
}

std::vector<Tensor> svd(const Tensor& a, bool full, bool uv, std::vector<int>& info) {
  const mx::array& x = array_of(a);
  // gesdd rejects NaN (MLX would throw from evaluation): reported as info -1 first.
  info = nonfinite_matrices(x);
  if (any_nonzero(info)) return {};
  std::vector<mx::array> r = mx::linalg::svd(x, uv, on_cpu());
  if (!uv) return {wrap(r[0])};
  int m = x.shape(-2), n = x.shape(-1), k = std::min(m, n);
  mx::array u = full ? r[0] : top_left_block(r[0], m, k);  // MLX returns the full U and Vh
  mx::array vh = full ? r[2] : top_left_block(r[2], k, n);
  return {wrap(u), wrap(r[1]), wrap(vh)};
}

std::pair<Tensor, Tensor> qr(const Tensor& a, bool complete, bool want_q) {
  const mx::array& x = array_of(a);
  auto s = on_cpu();
  int m = x.shape(-2), n = x.shape(-1);
  if (complete && m > n) {
    // MLX returns the reduced Q only. Householder QR of [A | I] keeps A's
    // reflectors for its first n columns and completes Q to m x m with the
    // rest; its R's first n columns are A's complete R (zero below row n).
    mx::Shape eye_shape = x.shape();
    eye_shape.back() = m;
    mx::array eye = mx::broadcast_to(mx::eye(m, x.dtype(), s), eye_shape, s);
    auto [q, r] = mx::linalg::qr(mx::concatenate({x, eye}, -1, s), s);
    return {want_q ? wrap(q) : Tensor(), wrap(top_left_block(r, m, n))};
  }
  auto [q, r] = mx::linalg::qr(x, s);
  return {want_q ? wrap(q) : Tensor(), wrap(r)};
}

Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool unit, std::vector<int>& info) {
  mx::array x = array_of(a);
  auto s = on_cpu();
  if (unit) {  // the stored diagonal is ignored: ones in its place
    mx::array eye = mx::eye(x.shape(-1), x.dtype(), s);
    x = mx::add(mx::multiply(x, mx::subtract(mx::array(1.0f, x.dtype()), eye, s), s), eye, s);
    info.assign(1, 0);
  } else {
    info = first_bad_diagonal(x, false);
    if (any_nonzero(info)) return Tensor();
  }
  return wrap(mx::linalg::solve_triangular(x, array_of(b), upper, s));
}

}  // namespace lucid::gpu
