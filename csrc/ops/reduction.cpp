#include "ops/reduction.h"

#include <algorithm>
#include <string>

#include "core/errors.h"
#include "core/reduction_kind.h"
#include "cpu/copy.h"
#include "cpu/reduction.h"
#include "gpu/reduction.h"
#include "ops/copy.h"
#include "ops/elementwise.h"

namespace lucid::ops {

namespace {

// Sorted, unique, non-negative axes. A 0-d tensor accepts dim 0 / -1 (as
// PyTorch does) and has nothing to reduce.
std::vector<int> resolve_axes(const Dims& dims, int ndim, const char* fn) {
  std::vector<int> axes;
  if (!dims) {
    for (int d = 0; d < ndim; ++d) axes.push_back(d);
    return axes;
  }
  for (int64_t d : *dims) {
    int a = normalize_axis(d, ndim, fn, "dim");
    if (ndim == 0) continue;
    check(std::find(axes.begin(), axes.end(), a) == axes.end(),
          std::string(fn) + "(): argument 'dim' repeats axis " + std::to_string(a));
    axes.push_back(a);
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

Shape reduced_shape(const Shape& shape, const std::vector<int>& axes, bool keepdim) {
  Shape out;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    bool red = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!red) out.push_back(shape[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

int64_t reduced_count(const Shape& shape, const std::vector<int>& axes) {
  int64_t n = 1;
  for (int a : axes) n *= shape[a];
  return n;
}

DType result_dtype(ReduceOp op, DType in) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod: return is_floating(in) ? in : DType::Int64;
    case ReduceOp::Max:
    case ReduceOp::Min: return in;
    case ReduceOp::All:
    case ReduceOp::Any: return DType::Bool;
  }
  return in;
}

void check_nonempty_axes(const char* fn, const Shape& shape, const std::vector<int>& axes) {
  for (int a : axes)
    check(shape[a] != 0, std::string(fn) + "(): cannot reduce over dimension " + std::to_string(a) +
                             " of size 0 (input shape " + shape_str(shape) +
                             "); the reduction has no identity, pass a non-empty 'input' or another 'dim'");
}

Tensor reduce_op(ReduceOp op, const char* fn, const Tensor& x, const Dims& dims, bool keepdim) {
  common_device(fn, {&x});
  std::vector<int> axes = resolve_axes(dims, x.ndim(), fn);
  if (op == ReduceOp::Max || op == ReduceOp::Min) check_nonempty_axes(fn, x.shape(), axes);
  if (x.device() == Device::GPU) return gpu::reduce(op, x, axes, keepdim);
  Tensor out = Tensor::empty_cpu(reduced_shape(x.shape(), axes, keepdim), result_dtype(op, x.dtype()));
  cpu::reduce(op, x, axes, out);
  return out;
}

Tensor cast_if_needed(const Tensor& x, DType dt) { return x.dtype() == dt ? x : astype(x, dt); }

// A contiguous CPU tensor's data seen with another shape of the same size.
Tensor reshaped_cpu(const Tensor& t, const Shape& shape) {
  Tensor c = contiguous(t);
  return Tensor::view_cpu(c.impl().storage, shape, contiguous_strides(shape), c.offset(), c.dtype());
}

Tensor scalar_like(const Tensor& x, double v) { return full({}, v, DType::Float32, x.device()); }

Tensor arg_op(bool is_max, const char* fn, const Tensor& x, std::optional<int64_t> dim, bool keepdim,
              Tensor* values) {
  common_device(fn, {&x});
  int axis = -1;
  Shape out_shape;
  if (dim) {
    int a = normalize_axis(*dim, x.ndim(), fn, "dim");
    if (x.ndim() > 0) axis = a;
  }
  if (axis >= 0) {
    check_nonempty_axes(fn, x.shape(), {axis});
    out_shape = reduced_shape(x.shape(), {axis}, keepdim);
  } else {
    check(x.numel() > 0, std::string(fn) + "(): expected a non-empty 'input', got shape " + shape_str(x.shape()));
    if (keepdim) out_shape.assign(x.ndim(), 1);
  }
  if (x.device() == Device::GPU) {
    Tensor idx = gpu::arg_reduce(is_max, x, axis, keepdim, values);
    // A 0-d input with a dim keeps its (empty) shape.
    return idx;
  }
  Tensor idx = Tensor::empty_cpu(out_shape, DType::Int64);
  if (values) *values = Tensor::empty_cpu(out_shape, x.dtype());
  cpu::arg_reduce(is_max, x, axis, idx, values);
  return idx;
}

}  // namespace

Tensor sum(const Tensor& x, const Dims& dims, bool keepdim, std::optional<DType> dtype) {
  common_device("sum", {&x});
  Tensor r = reduce_op(ReduceOp::Sum, "sum", dtype ? cast_if_needed(x, *dtype) : x, dims, keepdim);
  return dtype ? cast_if_needed(r, *dtype) : r;
}

Tensor prod(const Tensor& x, const Dims& dims, bool keepdim, std::optional<DType> dtype) {
  common_device("prod", {&x});
  Tensor r = reduce_op(ReduceOp::Prod, "prod", dtype ? cast_if_needed(x, *dtype) : x, dims, keepdim);
  return dtype ? cast_if_needed(r, *dtype) : r;
}

Tensor mean(const Tensor& x, const Dims& dims, bool keepdim) {
  common_device("mean", {&x});
  DType out_dt = is_floating(x.dtype()) ? x.dtype() : DType::Float32;
  // float32 accumulation for every input (float64: float64); halves round once, at the end.
  DType acc = x.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor s = reduce_op(ReduceOp::Sum, "mean", cast_if_needed(x, acc), dims, keepdim);
  int64_t n = reduced_count(x.shape(), resolve_axes(dims, x.ndim(), "mean"));
  return cast_if_needed(div(s, scalar_like(x, static_cast<double>(n))), out_dt);
}

Tensor var(const Tensor& x, const Dims& dims, double correction, bool keepdim) {
  common_device("var", {&x});
  DType out_dt = is_floating(x.dtype()) ? x.dtype() : DType::Float32;
  std::vector<int> axes = resolve_axes(dims, x.ndim(), "var");
  int64_t n = reduced_count(x.shape(), axes);
  // Two passes (mean, then squared deviations) in float32: no cancellation
  // from the sum-of-squares formula.
  Tensor xf = cast_if_needed(x, x.dtype() == DType::Float64 ? DType::Float64 : DType::Float32);
  Tensor m = mean(xf, dims, true);
  Tensor d = sub(xf, m);
  Tensor ss = reduce_op(ReduceOp::Sum, "var", mul(d, d), dims, keepdim);
  double denom = std::max(static_cast<double>(n) - correction, 0.0);
  return cast_if_needed(div(ss, scalar_like(x, denom)), out_dt);
}

Tensor amax(const Tensor& x, const Dims& dims, bool keepdim) { return reduce_op(ReduceOp::Max, "amax", x, dims, keepdim); }
Tensor amin(const Tensor& x, const Dims& dims, bool keepdim) { return reduce_op(ReduceOp::Min, "amin", x, dims, keepdim); }
Tensor all(const Tensor& x, const Dims& dims, bool keepdim) { return reduce_op(ReduceOp::All, "all", x, dims, keepdim); }

std::pair<Tensor, Tensor> aminmax(const Tensor& x, const Dims& dims, bool keepdim) {
  common_device("aminmax", {&x});
  std::vector<int> axes = resolve_axes(dims, x.ndim(), "aminmax");
  check_nonempty_axes("aminmax", x.shape(), axes);
  const int kept = x.ndim() - static_cast<int>(axes.size());
  const bool floating = is_floating(x.dtype());
  // The fused CPU kernel folds in float32 (MinMax), exact for float32 and half
  // precision only; float64 takes the two exact reductions.
  if (kept > 1 || !floating || x.numel() == 0 || x.dtype() == DType::Float64)
    return {reduce_op(ReduceOp::Min, "aminmax", x, dims, keepdim), reduce_op(ReduceOp::Max, "aminmax", x, dims, keepdim)};
  // One kept axis k (or none): x is (outer, C, inner) with C = shape[k].
  int64_t outer = 1, channels = 1, inner = 1;
  int k = -1;
  for (int d = 0; d < x.ndim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) k = d;
  for (int d = 0; d < x.ndim(); ++d) {
    if (k < 0 || d > k) inner *= x.shape()[d];
    else if (d < k) outer *= x.shape()[d];
    else channels = x.shape()[d];
  }
  Shape out_shape = reduced_shape(x.shape(), axes, keepdim);
  if (x.device() == Device::GPU) {
    auto r = gpu::aminmax(x, axes, keepdim);
    return r;
  }
  Tensor mn = Tensor::empty_cpu(out_shape, x.dtype());
  Tensor mx = Tensor::empty_cpu(out_shape, x.dtype());
  cpu::aminmax(contiguous(x), outer, channels, inner, mn, mx);
  return {mn, mx};
}
Tensor any(const Tensor& x, const Dims& dims, bool keepdim) { return reduce_op(ReduceOp::Any, "any", x, dims, keepdim); }

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_op(true, "argmax", x, dim, keepdim, nullptr);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_op(false, "argmin", x, dim, keepdim, nullptr);
}

std::pair<Tensor, Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim) {
  Tensor values;
  Tensor idx = arg_op(true, "max", x, dim, keepdim, &values);
  return {values, idx};
}
std::pair<Tensor, Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim) {
  Tensor values;
  Tensor idx = arg_op(false, "min", x, dim, keepdim, &values);
  return {values, idx};
}

Tensor broadcast_reduced(const Tensor& g, const Shape& shape, const Dims& dims) {
  common_device("broadcast_reduced", {&g});
  std::vector<int> axes = resolve_axes(dims, static_cast<int>(shape.size()), "broadcast_reduced");
  Shape keep = reduced_shape(shape, axes, true);
  check(g.numel() == numel(keep), "broadcast_reduced(): gradient of shape " + shape_str(g.shape()) +
                                      " does not match the reduced shape " + shape_str(keep));
  if (g.device() == Device::GPU) return gpu::broadcast_reduced(g, keep, shape);
  Tensor out = Tensor::empty_cpu(shape, g.dtype());
  cpu::copy_into(reshaped_cpu(g, keep), out);
  return out;
}

Tensor equal_mask(const Tensor& x, const Tensor& v, const Dims& dims) {
  common_device("equal_mask", {&x, &v});
  check<TypeError>(is_floating(x.dtype()) && v.dtype() == x.dtype(),
                   "equal_mask(): expected floating tensors of one dtype");
  Tensor vb = broadcast_reduced(v, x.shape(), dims);
  if (x.device() == Device::GPU) return gpu::equal_mask(x, vb);
  Tensor mask = Tensor::empty_cpu(x.shape(), x.dtype());
  cpu::equal_mask(x, vb, mask);
  return mask;
}

Tensor prod_of_others(const Tensor& x, const Dims& dims) {
  common_device("prod_of_others", {&x});
  check<TypeError>(is_floating(x.dtype()), "prod_of_others(): expected a floating tensor");
  std::vector<int> axes = resolve_axes(dims, x.ndim(), "prod_of_others");
  if (x.device() == Device::GPU) return gpu::prod_of_others(x, axes);
  Tensor out = Tensor::empty_cpu(x.shape(), x.dtype());
  cpu::prod_of_others(x, axes, out);
  return out;
}

Tensor scatter_along(const Tensor& g, const Tensor& indices, const Shape& shape, int64_t dim, bool keepdim) {
  (void)keepdim;  // g and indices are reshaped to the keepdim form either way
  common_device("scatter_along", {&g, &indices});
  if (shape.empty()) return clone(g);  // a 0-d input: its own max
  int axis = normalize_axis(dim, static_cast<int>(shape.size()), "scatter_along", "dim");
  Shape keep = shape;
  keep[axis] = 1;
  check(g.numel() == numel(keep) && indices.numel() == numel(keep) && indices.dtype() == DType::Int64,
        "scatter_along(): gradient / indices do not match shape " + shape_str(keep));
  if (g.device() == Device::GPU)
    return gpu::scatter_along(gpu::broadcast_reduced(g, keep, keep), gpu::broadcast_reduced(indices, keep, keep),
                              axis, shape);
  Tensor out = full(shape, 0.0, g.dtype(), Device::CPU);
  cpu::scatter_along(reshaped_cpu(g, keep), reshaped_cpu(indices, keep), axis, out);
  return out;
}

}  // namespace lucid::ops
