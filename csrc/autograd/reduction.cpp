// sum / mean, var, prod, amax / amin and max / min along a dim recorded in C++;
// see reduction.h.
#include "autograd/reduction.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/reduction.h"
#include "ops/scalar.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// `_Sum.backward`: the gradient broadcast back to the input's shape, in the input's dtype.
InputGrads sum_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  Tensor gx = ops::broadcast_reduced(g, n.input_shape, n.dims);
  r.grad[0] = gx.dtype() == n.input_dtype ? gx : ops::astype(gx, n.input_dtype);
  return r;
}

// `_Mean.backward`: the same, divided by the number of elements each output averaged.
InputGrads mean_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  int64_t count = 1;
  if (n.dims) {
    for (int64_t d : *n.dims)
      if (d >= 0 && static_cast<size_t>(d) < n.input_shape.size()) count *= n.input_shape[static_cast<size_t>(d)];
  } else {
    for (int64_t s : n.input_shape) count *= s;
  }
  Tensor gx = ops::broadcast_reduced(g, n.input_shape, n.dims);
  r.grad[0] = ops::div(gx, ops::scalar_tensor(static_cast<double>(std::max<int64_t>(count, 1)),
                                              ops::ScalarKind::Integer, gx));
  return r;
}

NodeKind reduction_kinds[] = {{"SumBackward", "sum", nullptr, sum_backward}, {"MeanBackward", "mean", nullptr, mean_backward}};

// Attaches a node of `kind` to `out` when x requires grad, grad mode is on and
// the result is floating point (what Function.apply would record).
void record_reduction(NodeKind& kind, py::handle x, const Tensor& h, const ops::Dims& dims, const py::object& out) {
  if (!tensor_object(x.ptr())->requires_grad || !grad_enabled() || !is_floating(handle_of(out.ptr()).dtype())) return;
  PyObject* input = x.ptr();
  CppNode& n = record_node(kind, &input, 1, nullptr, 0, out.ptr());
  n.input_shape = h.shape();
  n.input_dtype = h.dtype();
  if (dims) {  // ops:: accepted them (in range, no repeats); the formulas index with them: wrapped, sorted
    std::vector<int64_t> axes = *dims;
    int64_t nd = std::max(h.ndim(), 1);  // a 0-d input takes axis 0 / -1, as lucid.sum's dims_arg
    for (int64_t& d : axes) d = ((d % nd) + nd) % nd;
    std::sort(axes.begin(), axes.end());
    n.dims = std::move(axes);
  }
}

// ----- var, prod, amax / amin, max / min along a dim ------------------------------------

// The number of elements each output reduces over (lucid._ops.reduction._reduced_count).
int64_t reduced_count(const Shape& shape, const ops::Dims& dims) {
  int64_t count = 1;
  if (dims) {
    for (int64_t d : *dims)
      if (d >= 0 && static_cast<size_t>(d) < shape.size()) count *= shape[static_cast<size_t>(d)];
  } else {
    for (int64_t s : shape) count *= s;
  }
  return count;
}

// `_Var.backward`: g broadcast back, times (x - mean(x)), times 2 / (n - correction)
// (nan when that is not positive), as `* scale` with a Python float multiplies.
// saved: (x); node.scalars[0]: the correction.
InputGrads var_backward(const CppNode& n, const Tensor& g) {
  const Tensor& x = n.saved_handles[0];
  double denom = static_cast<double>(reduced_count(x.shape(), n.dims)) - n.scalars[0];
  double scale = denom > 0 ? 2.0 / denom : std::numeric_limits<double>::quiet_NaN();
  Tensor centered = ops::sub(x, ops::mean(x, n.dims, true));
  Tensor gx = ops::mul(ops::broadcast_reduced(g, x.shape(), n.dims), centered);
  InputGrads r;
  r.grad[0] = ops::mul(gx, ops::scalar_tensor(scale, ops::ScalarKind::Real, gx));
  return r;
}

// `_Prod.backward`: g broadcast back (cast to x's dtype) times the product of
// the other elements of each group (ops::prod_of_others: exact with zeros). saved: (x).
InputGrads prod_backward(const CppNode& n, const Tensor& g) {
  const Tensor& x = n.saved_handles[0];
  Tensor others = ops::prod_of_others(x, n.dims);
  Tensor gx = ops::broadcast_reduced(g, x.shape(), n.dims);
  if (gx.dtype() != x.dtype()) gx = ops::astype(gx, x.dtype());
  InputGrads r;
  r.grad[0] = ops::mul(gx, others);
  return r;
}

// `_Extreme.backward`: g broadcast back, shared equally among the elements equal
// to the extreme (NaN equal to NaN). saved: (x, out).
InputGrads extreme_backward(const CppNode& n, const Tensor& g) {
  const Tensor &x = n.saved_handles[0], &out = n.saved_handles[1];
  Tensor mask = ops::equal_mask(x, out, n.dims);
  Tensor count = ops::sum(mask, n.dims, true, std::nullopt);
  InputGrads r;
  r.grad[0] = ops::div(ops::mul(ops::broadcast_reduced(g, x.shape(), n.dims), mask), count);
  return r;
}

// `_ExtremeDim.backward` (no create_graph): the values' gradient placed at the
// returned indices, zeros elsewhere. saved: (indices); node.dims[0]: the dim;
// node.params[0]: keepdim.
InputGrads extreme_dim_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::scatter_along(g, n.saved_handles[0], n.input_shape, (*n.dims)[0], n.params[0] != 0);
  return r;
}

// Two outputs (values, indices) as _ExtremeDim records; the indices take no gradient.
NodeKind more_kinds[] = {{"VarBackward", "var", nullptr, var_backward},
                         {"ProdBackward", "prod", nullptr, prod_backward},
                         {"AmaxBackward", "amax", nullptr, extreme_backward},
                         {"AminBackward", "amin", nullptr, extreme_backward},
                         {"MaxBackward", "max", nullptr, extreme_dim_backward},
                         {"MinBackward", "min", nullptr, extreme_dim_backward}};
enum { kVar, kProd, kAmax, kAmin, kMaxDim, kMinDim };

// ops:: accepted the axes (in range, no repeats); the formulas index with them:
// wrapped and sorted, as record_reduction keeps them.
std::optional<std::vector<int64_t>> wrapped_sorted(const ops::Dims& dims, int64_t ndim) {
  if (!dims) return std::nullopt;
  std::vector<int64_t> axes = *dims;
  int64_t nd = std::max<int64_t>(ndim, 1);
  for (int64_t& d : axes) d = ((d % nd) + nd) % nd;
  std::sort(axes.begin(), axes.end());
  return axes;
}

// A node of `kind` over x saving `saved` (tensor objects), with x's shape and
// dtype and the reduced axes.
CppNode& record_reduction(NodeKind& kind, py::handle x, const Tensor& h, std::initializer_list<PyObject*> saved,
                          const ops::Dims& dims, const py::object& out) {
  PyObject* input = x.ptr();
  CppNode& n = record_node(kind, &input, 1, saved.begin(), static_cast<int>(saved.size()), out.ptr());
  n.input_shape = h.shape();
  n.input_dtype = h.dtype();
  n.dims = wrapped_sorted(dims, h.ndim());
  return n;
}

py::object extreme(NodeKind& kind, const char* fn, py::handle x, const ops::Dims& dims, bool keepdim, bool is_max) {
  const Tensor& h = tensor_arg(x.ptr(), fn, "input");
  py::object out = steal(wrap(is_max ? ops::amax(h, dims, keepdim) : ops::amin(h, dims, keepdim)));
  if (records({x.ptr()}, out.ptr())) record_reduction(kind, x, h, {x.ptr(), out.ptr()}, dims, out);
  return out;
}

py::tuple extreme_dim(NodeKind& kind, const char* fn, py::handle x, int64_t dim, bool keepdim, bool is_max) {
  const Tensor& h = tensor_arg(x.ptr(), fn, "input");
  auto [v, i] = is_max ? ops::max_dim(h, dim, keepdim) : ops::min_dim(h, dim, keepdim);
  py::object values = steal(wrap(std::move(v))), indices = steal(wrap(std::move(i)));
  if (records({x.ptr()}, values.ptr())) {
    CppNode& n = record_reduction(kind, x, h, {indices.ptr()}, std::vector<int64_t>{dim}, values);
    n.params = {keepdim ? 1 : 0};
    n.num_outputs = 2;  // (values, indices), as Function.apply had it; the indices take no gradient
  }
  return py::make_tuple(values, indices);
}

}  // namespace

void init_reduction(py::module_& m) {
  m.def("autograd_sum", [](py::handle x, const ops::Dims& dims, bool keepdim, const std::optional<std::string>& dtype) {
    const Tensor& h = tensor_arg(x.ptr(), "sum", "input");
    std::optional<DType> dt;
    if (dtype) dt = dtype_from_name(*dtype);
    py::object out = steal(wrap(ops::sum(h, dims, keepdim, dt)));
    record_reduction(reduction_kinds[0], x, h, dims, out);
    return out;
  });
  m.def("autograd_mean", [](py::handle x, const ops::Dims& dims, bool keepdim) {
    const Tensor& h = tensor_arg(x.ptr(), "mean", "input");
    py::object out = steal(wrap(ops::mean(h, dims, keepdim)));
    record_reduction(reduction_kinds[1], x, h, dims, out);
    return out;
  });
  m.def("autograd_var", [](py::handle x, const ops::Dims& dims, double correction, bool keepdim) {
    const Tensor& h = tensor_arg(x.ptr(), "var", "input");
    py::object out = steal(wrap(ops::var(h, dims, correction, keepdim)));
    if (records({x.ptr()}, out.ptr())) record_reduction(more_kinds[kVar], x, h, {x.ptr()}, dims, out).scalars[0] = correction;
    return out;
  });
  m.def("autograd_prod", [](py::handle x, const ops::Dims& dims, bool keepdim, const std::optional<std::string>& dtype) {
    const Tensor& h = tensor_arg(x.ptr(), "prod", "input");
    std::optional<DType> dt;
    if (dtype) dt = dtype_from_name(*dtype);
    py::object out = steal(wrap(ops::prod(h, dims, keepdim, dt)));
    if (records({x.ptr()}, out.ptr())) record_reduction(more_kinds[kProd], x, h, {x.ptr()}, dims, out);
    return out;
  });
  m.def("autograd_amax", [](py::handle x, const ops::Dims& dims, bool keepdim) {
    return extreme(more_kinds[kAmax], "amax", x, dims, keepdim, true);
  });
  m.def("autograd_amin", [](py::handle x, const ops::Dims& dims, bool keepdim) {
    return extreme(more_kinds[kAmin], "amin", x, dims, keepdim, false);
  });
  // (values, indices); ops:: checks `dim`, the node keeps it wrapped.
  m.def("autograd_max_dim", [](py::handle x, int64_t dim, bool keepdim) {
    return extreme_dim(more_kinds[kMaxDim], "max", x, dim, keepdim, true);
  });
  m.def("autograd_min_dim", [](py::handle x, int64_t dim, bool keepdim) {
    return extreme_dim(more_kinds[kMinDim], "min", x, dim, keepdim, false);
  });
  // lucid/_ops/reduction.py, at import: the Functions whose recorded formulas serve create_graph.
  m.def("_register_reduction", [](py::object sum, py::object mean) {
    reduction_kinds[0].function = sum.release().ptr();
    reduction_kinds[1].function = mean.release().ptr();
  });
  m.def("_register_reduction_more", [](py::object var, py::object prod, py::object extreme, py::object extreme_dim) {
    more_kinds[kVar].function = var.release().ptr();
    more_kinds[kProd].function = prod.release().ptr();
    more_kinds[kAmax].function = more_kinds[kAmin].function = extreme.release().ptr();
    more_kinds[kMaxDim].function = more_kinds[kMinDim].function = extreme_dim.release().ptr();
  });
}

}  // namespace lucid::autograd
