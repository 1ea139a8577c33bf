#include "gpu/reduction.h"

#include "core/errors.h"
#include "gpu/array.h"

namespace lucid::gpu {

namespace {

bool is_float(const mx::array& a) { return mx::issubdtype(a.dtype(), mx::floating); }

std::vector<int> all_axes(int ndim) {
  std::vector<int> axes(ndim);
  for (int d = 0; d < ndim; ++d) axes[d] = d;
  return axes;
}

}  // namespace

Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes, bool keepdim) {
  auto s = stream();
  mx::array a = array_of(x);
  mx::Dtype dt = a.dtype();
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod: {
      // Accumulate wide (float32 / int64) and round once, as the CPU stream does.
      mx::Dtype acc = is_float(a) ? mx::float32 : mx::int64;
      mx::array w = mx::astype(a, acc, s);
      mx::array r = op == ReduceOp::Sum ? mx::sum(w, axes, keepdim, s) : mx::prod(w, axes, keepdim, s);
      return wrap(mx::astype(r, is_float(a) ? dt : mx::int64, s));
    }
    case ReduceOp::Max:
    case ReduceOp::Min: {
      mx::array w = dt == mx::bool_ ? mx::astype(a, mx::uint8, s) : a;
      mx::array r = op == ReduceOp::Max ? mx::max(w, axes, keepdim, s) : mx::min(w, axes, keepdim, s);
      return wrap(mx::astype(r, dt, s));
    }
    case ReduceOp::All:
    case ReduceOp::Any: {
      mx::array b = mx::astype(a, mx::bool_, s);
      return wrap(op == ReduceOp::All ? mx::all(b, axes, keepdim, s) : mx::any(b, axes, keepdim, s));
    }
  }
  throw RuntimeError("internal: unknown reduction");
}

std::pair<Tensor, Tensor> aminmax(const Tensor& x, const std::vector<int>& axes, bool keepdim) {
  auto s = stream();
  const mx::array& a = array_of(x);
  return {wrap(mx::min(a, axes, keepdim, s)), wrap(mx::max(a, axes, keepdim, s))};
}

Tensor arg_reduce(bool is_max, const Tensor& x, int axis, bool keepdim, Tensor* values) {
  auto s = stream();
  mx::array a = array_of(x);
  mx::Dtype dt = a.dtype();
  if (dt == mx::bool_) a = mx::astype(a, mx::uint8, s);
  mx::Shape keep_shape(x.ndim(), 1);
  if (axis < 0) {
    a = mx::reshape(a, {static_cast<int>(x.numel())}, s);
    axis = 0;
  } else {
    keep_shape = a.shape();
    keep_shape[axis] = 1;
  }
  // MLX's own argmax does not promise the first index on every backend, so
  // it is spelled out: the smallest position holding the extreme (or a NaN).
  mx::array m = is_max ? mx::max(a, axis, true, s) : mx::min(a, axis, true, s);
  mx::array hit = mx::equal(a, m, s);
  if (is_float(a)) hit = mx::logical_or(hit, mx::logical_and(mx::isnan(a, s), mx::isnan(m, s), s), s);
  int n = a.shape(axis);
  mx::Shape pos_shape(a.ndim(), 1);
  pos_shape[axis] = n;
  mx::array pos = mx::reshape(mx::arange(n, s), pos_shape, s);
  mx::array cand = mx::where(hit, pos, mx::array(n, mx::int32), s);
  mx::array idx = mx::astype(mx::min(cand, axis, true, s), mx::int64, s);
  auto shaped = [&](const mx::array& r) { return keepdim ? mx::reshape(r, keep_shape, s) : mx::squeeze(r, axis, s); };
  if (values) *values = wrap(mx::astype(shaped(m), dt, s));
  return wrap(shaped(idx));
}

Tensor broadcast_reduced(const Tensor& g, const Shape& keep_shape, const Shape& shape) {
  auto s = stream();
  mx::array r = mx::reshape(array_of(g), to_mx_shape(keep_shape), s);
  return wrap(mx::broadcast_to(r, to_mx_shape(shape), s));
}

Tensor equal_mask(const Tensor& x, const Tensor& v) {
  auto s = stream();
  const mx::array& a = array_of(x);
  const mx::array& b = array_of(v);
  mx::array hit = mx::logical_or(mx::equal(a, b, s), mx::logical_and(mx::isnan(a, s), mx::isnan(b, s), s), s);
  return wrap(mx::astype(hit, a.dtype(), s));
}

Tensor prod_of_others(const Tensor& x, const std::vector<int>& axes) {
  auto s = stream();
  const mx::array& a = array_of(x);
  if (x.numel() == 0) return wrap(mx::zeros_like(a, s));
  int nd = x.ndim();
  std::vector<bool> is_red(nd, false);
  for (int d : axes) is_red[d] = true;
  std::vector<int> perm, inverse(nd);
  for (int d = 0; d < nd; ++d) if (!is_red[d]) perm.push_back(d);
  for (int d = 0; d < nd; ++d) if (is_red[d]) perm.push_back(d);
  for (int d = 0; d < nd; ++d) inverse[perm[d]] = d;
  int red = 1;
  for (int d : axes) red *= static_cast<int>(x.shape()[d]);
  int rows = static_cast<int>(x.numel() / red);
  mx::array t = mx::transpose(mx::astype(a, mx::float32, s), perm, s);
  mx::Shape tshape = t.shape();
  mx::array rows_2d = mx::reshape(t, {rows, red}, s);
  // product of the others = (exclusive prefix product) * (exclusive suffix product)
  mx::array pre = mx::cumprod(rows_2d, 1, false, false, s);
  mx::array suf = mx::cumprod(rows_2d, 1, true, false, s);
  mx::array o = mx::reshape(mx::multiply(pre, suf, s), tshape, s);
  return wrap(mx::astype(mx::transpose(o, inverse, s), a.dtype(), s));
}

Tensor scatter_along(const Tensor& g, const Tensor& indices, int axis, const Shape& shape) {
  auto s = stream();
  const mx::array& gv = array_of(g);
  int n = static_cast<int>(shape[axis]);
  mx::Shape pos_shape(shape.size(), 1);
  pos_shape[axis] = n;
  mx::array pos = mx::reshape(mx::arange(n, s), pos_shape, s);
  mx::array hit = mx::equal(pos, mx::astype(array_of(indices), mx::int32, s), s);
  mx::array zero = mx::zeros({}, gv.dtype(), s);
  return wrap(mx::broadcast_to(mx::where(hit, gv, zero, s), to_mx_shape(shape), s));
}

}  // namespace lucid::gpu
