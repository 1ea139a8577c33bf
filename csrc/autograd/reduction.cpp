// sum / mean recorded in C++; see reduction.h.
#include "autograd/reduction.h"

#include <pybind11/stl.h>

#include <algorithm>
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

NodeKind kinds[] = {{"SumBackward", "sum", nullptr, sum_backward}, {"MeanBackward", "mean", nullptr, mean_backward}};

py::object steal(PyObject* p) {
  if (!p) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(p);
}

// Attaches a node of `kind` to `out` when x requires grad, grad mode is on and
// the result is floating point (what Function.apply would record).
void maybe_record(NodeKind& kind, py::handle x, const Tensor& h, const ops::Dims& dims, const py::object& out) {
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

}  // namespace

void init_reduction(py::module_& m) {
  m.def("autograd_sum", [](py::handle x, const ops::Dims& dims, bool keepdim, const std::optional<std::string>& dtype) {
    const Tensor& h = tensor_arg(x.ptr(), "sum", "input");
    std::optional<DType> dt;
    if (dtype) dt = dtype_from_name(*dtype);
    py::object out = steal(wrap(ops::sum(h, dims, keepdim, dt)));
    maybe_record(kinds[0], x, h, dims, out);
    return out;
  });
  m.def("autograd_mean", [](py::handle x, const ops::Dims& dims, bool keepdim) {
    const Tensor& h = tensor_arg(x.ptr(), "mean", "input");
    py::object out = steal(wrap(ops::mean(h, dims, keepdim)));
    maybe_record(kinds[1], x, h, dims, out);
    return out;
  });
  // lucid/_ops/reduction.py, at import: the Functions whose recorded formulas serve create_graph.
  m.def("_register_reduction", [](py::object sum, py::object mean) {
    kinds[0].function = sum.release().ptr();
    kinds[1].function = mean.release().ptr();
  });
}

}  // namespace lucid::autograd
