// gather, index_select, the scatters and index writes, and sort / topk /
// median values recorded in C++; see indexing.h.
#include "autograd/indexing.h"

#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/copy.h"
#include "ops/indexing.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {



// The node's axis (ctx.dim) and saved index.
int64_t axis_of(const CppNode& n) { return (*n.dims)[0]; }
const Tensor& saved_index(const CppNode& n) { return n.saved_handles[0]; }

Tensor zeros_like_grad(const Shape& shape, const Tensor& g) { return ops::full(shape, 0.0, g.dtype(), g.device()); }

// scatter / scatter_add's src gradient, as their Functions' first-order branch:
// g read at index, written into zeros of src's shape (ctx.params), since only
// src's leading block (index's shape) was read.
Tensor src_grad(const CppNode& n, const Tensor& g) {
  const Tensor& index = saved_index(n);
  Tensor picked = ops::gather(g, axis_of(n), index);
  Tensor out = zeros_like_grad(Shape(n.params.begin(), n.params.end()), g);
  const size_t nd = static_cast<size_t>(g.ndim());
  ops::slice_assign(out, std::vector<int64_t>(nd, 0), std::vector<int64_t>(nd, 1), index.shape(), picked);
  return out;
}

// `_Gather.backward` and `_Select.backward`: g scatter-added into zeros of the input's shape.
InputGrads gather_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::scatter_add(zeros_like_grad(n.input_shape, g), axis_of(n), saved_index(n), g);
  return r;
}

// `_IndexSelect.backward`: g index-added into zeros of the input's shape.
InputGrads index_select_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::index_add(zeros_like_grad(n.input_shape, g), axis_of(n), saved_index(n), g);
  return r;
}

// The writes' nodes have the Functions' four inputs (x, dim, index, src): the
// Python formulas read needs_input_grad[3].
InputGrads scatter_add_backward(const CppNode& n, const Tensor& g) {
  InputGrads r(4);
  r.pass[0] = 1;
  if (needs(n, 3)) r.grad[3] = src_grad(n, g);
  return r;
}

// `_Scatter.backward`: overwritten positions get no gradient (zeros scattered into g).
InputGrads scatter_backward(const CppNode& n, const Tensor& g) {
  InputGrads r(4);
  if (needs(n, 0)) r.grad[0] = ops::scatter(g, axis_of(n), saved_index(n), zeros_like_grad(saved_index(n).shape(), g));
  if (needs(n, 3)) r.grad[3] = src_grad(n, g);
  return r;
}

InputGrads index_add_backward(const CppNode& n, const Tensor& g) {
  InputGrads r(4);
  r.pass[0] = 1;
  if (needs(n, 3)) r.grad[3] = ops::index_select(g, axis_of(n), saved_index(n));
  return r;
}

// `_IndexCopy.backward`: the replaced rows get no gradient (zero rows copied into g).
InputGrads index_copy_backward(const CppNode& n, const Tensor& g) {
  InputGrads r(4);
  if (needs(n, 0)) {
    Shape src_shape(n.params.begin(), n.params.end());
    r.grad[0] = ops::index_copy(g, axis_of(n), saved_index(n), zeros_like_grad(src_shape, g));
  }
  if (needs(n, 3)) r.grad[3] = ops::index_select(g, axis_of(n), saved_index(n));
  return r;
}

NodeKind gather_kind = {"GatherBackward", "gather", nullptr, gather_backward};
NodeKind index_select_kind = {"IndexSelectBackward", "index_select", nullptr, index_select_backward};
NodeKind scatter_add_kind = {"ScatterAddBackward", "scatter_add", nullptr, scatter_add_backward};
NodeKind scatter_kind = {"ScatterBackward", "scatter", nullptr, scatter_backward};
NodeKind index_add_kind = {"IndexAddBackward", "index_add", nullptr, index_add_backward};
NodeKind index_copy_kind = {"IndexCopyBackward", "index_copy", nullptr, index_copy_backward};
// `_Select`'s names (its node_name: the op's name capitalized).
NodeKind sort_kind = {"SortBackward", "sort", nullptr, gather_backward};
NodeKind topk_kind = {"TopkBackward", "topk", nullptr, gather_backward};
NodeKind median_kind = {"MedianBackward", "median", nullptr, gather_backward};

// A read (gather, index_select, a sort's values): out = read(x, dim, index),
// recorded over the Function's inputs (x, dim, index), the index saved.
py::object record_read(NodeKind& kind, py::handle x, int64_t dim, py::handle index, Tensor result,
                       const Shape& in_shape) {
  py::object out = steal(wrap(std::move(result)));
  if (records({x.ptr()}, out.ptr())) {
    PyObject* inputs[3] = {x.ptr(), Py_None, index.ptr()};
    PyObject* saved = index.ptr();
    CppNode& n = record_node(kind, inputs, 3, &saved, 1, out.ptr());
    n.input_shape = in_shape;
    n.dims = std::vector<int64_t>{dim};
  }
  return out;
}

using Write = Tensor (*)(const Tensor&, int64_t, const Tensor&, const Tensor&);

// A write (scatter_add, scatter, index_add, index_copy): out = write(x, dim, index, src),
// recorded over (x, dim, index, src), the index saved, src's shape in params.
py::object record_write(NodeKind& kind, Write write, const char* fn, const char* src_name, py::handle x,
                        int64_t dim, py::handle index, py::handle src) {
  const Tensor& hx = tensor_arg(x.ptr(), fn, "input");
  const Tensor& hi = tensor_arg(index.ptr(), fn, "index");
  const Tensor& hs = tensor_arg(src.ptr(), fn, src_name);
  py::object out = steal(wrap(write(hx, dim, hi, hs)));
  if (records({x.ptr(), src.ptr()}, out.ptr())) {
    PyObject* inputs[4] = {x.ptr(), Py_None, index.ptr(), src.ptr()};
    PyObject* saved = index.ptr();
    CppNode& n = record_node(kind, inputs, 4, &saved, 1, out.ptr());
    n.dims = std::vector<int64_t>{dim};
    n.params.assign(hs.shape().begin(), hs.shape().end());
  }
  return out;
}

}  // namespace

void init_indexing(py::module_& m) {
  m.def("autograd_gather", [](py::handle x, int64_t dim, py::handle index) {
    const Tensor& hx = tensor_arg(x.ptr(), "gather", "input");
    const Tensor& hi = tensor_arg(index.ptr(), "gather", "index");
    return record_read(gather_kind, x, dim, index, ops::gather(hx, dim, hi), hx.shape());
  });
  m.def("autograd_index_select", [](py::handle x, int64_t dim, py::handle index) {
    const Tensor& hx = tensor_arg(x.ptr(), "index_select", "input");
    const Tensor& hi = tensor_arg(index.ptr(), "index_select", "index");
    return record_read(index_select_kind, x, dim, index, ops::index_select(hx, dim, hi), hx.shape());
  });
  // The values of sort / topk / median: x gathered at their indices (`name`: which of the three).
  m.def("autograd_select", [](py::handle x, py::handle indices, int64_t dim, const std::string& name) {
    NodeKind* kind = name == "sort" ? &sort_kind : name == "topk" ? &topk_kind : name == "median" ? &median_kind
                                                                                                  : nullptr;
    if (!kind) throw ValueError("autograd_select(): name must be 'sort', 'topk' or 'median', got '" + name + "'");
    const Tensor& hx = tensor_arg(x.ptr(), name.c_str(), "input");
    const Tensor& hi = tensor_arg(indices.ptr(), name.c_str(), "indices");
    return record_read(*kind, x, dim, indices, ops::gather(hx, dim, hi), hx.shape());
  });
  m.def("autograd_scatter_add", [](py::handle x, int64_t dim, py::handle index, py::handle src) {
    return record_write(scatter_add_kind, ops::scatter_add, "scatter_add", "src", x, dim, index, src);
  });
  m.def("autograd_scatter", [](py::handle x, int64_t dim, py::handle index, py::handle src) {
    return record_write(scatter_kind, ops::scatter, "scatter", "src", x, dim, index, src);
  });
  m.def("autograd_index_add", [](py::handle x, int64_t dim, py::handle index, py::handle source) {
    return record_write(index_add_kind, ops::index_add, "index_add", "source", x, dim, index, source);
  });
  m.def("autograd_index_copy", [](py::handle x, int64_t dim, py::handle index, py::handle source) {
    return record_write(index_copy_kind, ops::index_copy, "index_copy", "source", x, dim, index, source);
  });
  // lucid/_ops/indexing.py and sorting.py, at import: the Functions whose recorded
  // formulas serve create_graph.
  m.def("_register_gather", [](py::object gather, py::object index_select, py::object scatter_add,
                               py::object scatter, py::object index_add, py::object index_copy) {
    gather_kind.function = gather.release().ptr();
    index_select_kind.function = index_select.release().ptr();
    scatter_add_kind.function = scatter_add.release().ptr();
    scatter_kind.function = scatter.release().ptr();
    index_add_kind.function = index_add.release().ptr();
    index_copy_kind.function = index_copy.release().ptr();
  });
  m.def("_register_select", [](py::object select) {
    PyObject* f = select.release().ptr();
    Py_INCREF(f);
    Py_INCREF(f);
    sort_kind.function = topk_kind.function = median_kind.function = f;
  });
}

}  // namespace lucid::autograd
