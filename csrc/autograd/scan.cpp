// cumsum / cumprod recorded in C++; see scan.h.
#include "autograd/scan.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/indexing.h"
#include "ops/reduction.h"
#include "ops/scalar.h"
#include "ops/scan.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// lucid.flip(t, [d]): basic indexing with slice(None, None, -1) along d.
Tensor flip(const Tensor& t, int64_t d) {
  size_t nd = t.shape().size(), axis = static_cast<size_t>(d);
  std::vector<int64_t> starts(nd, 0), steps(nd, 1);
  starts[axis] = t.shape()[axis] - 1;  // as PySlice_AdjustIndices gives it
  steps[axis] = -1;
  return ops::slice(t, starts, steps, t.shape());
}

// lucid/_ops/scan.py's _reverse_cumsum: out[i] = sum_{k >= i} g[k] along d.
Tensor reverse_cumsum(const Tensor& g, int64_t d) { return flip(ops::cumsum(flip(g, d), d), d); }

// `_Cumsum.backward`: the reversed running sum (a 0-d gradient as it is). node.dims[0]: the dim.
InputGrads cumsum_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  if (g.ndim() == 0)
    r.pass[0] = true;
  else
    r.grad[0] = reverse_cumsum(g, (*n.dims)[0]);
  return r;
}

// first, first + 1, ..., last - 1 as int64 on `device` (lucid.tensor(list(range(...)))).
Tensor positions(int64_t first, int64_t last, Device device) {
  auto values = std::make_shared<std::vector<int64_t>>();
  for (int64_t i = first; i < last; ++i) values->push_back(i);
  Shape shape{static_cast<int64_t>(values->size())};
  Tensor t = ops::from_buffer(values->data(), shape, Strides{1}, DType::Int64, values);
  return device == Device::CPU ? t : ops::to_device(t, device);
}


// `_Cumprod.backward`: without zeros in x, reverse_cumsum(g * y) / x; with one,
// per position i the cumprod of x with x_i set to 1, read from i on against g
// and summed (the Python formula's ops in its order). saved: (x, y); node.dims[0]: the dim.
InputGrads cumprod_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  if (g.ndim() == 0) {
    r.pass[0] = true;
    return r;
  }
  const Tensor &x = n.saved_handles[0], &y = n.saved_handles[1];
  int64_t d = (*n.dims)[0];
  Tensor any_zero = ops::any(ops::eq(x, ops::full({}, 0.0, x.dtype(), x.device())), std::nullopt, false);
  if (any_zero.device() != Device::CPU) any_zero = ops::to_device(any_zero, Device::CPU);
  if (!*static_cast<const bool*>(any_zero.raw_data())) {
    r.grad[0] = ops::div(reverse_cumsum(ops::mul(g, y), d), x);
    return r;
  }
  int64_t size = x.shape()[static_cast<size_t>(d)];
  Device device = x.device();
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < size; ++i) {
    Tensor picked = ops::index_select(x, d, positions(i, i + 1, device));
    Tensor zeroed = ops::mul(picked, integer(0, picked));
    Tensor ones = ops::add(zeroed, integer(1, zeroed));
    std::vector<Tensor> pieces;
    if (i) pieces.push_back(ops::index_select(x, d, positions(0, i, device)));
    pieces.push_back(ones);
    if (i + 1 < size) pieces.push_back(ops::index_select(x, d, positions(i + 1, size, device)));
    Tensor c = ops::cumprod(ops::cat(pieces, d), d);
    Tensor tail = positions(i, size, device);
    Tensor term = ops::mul(ops::index_select(c, d, tail), ops::index_select(g, d, tail));
    parts.push_back(ops::sum(term, std::vector<int64_t>{d}, true, std::nullopt));
  }
  r.grad[0] = ops::cat(parts, d);
  return r;
}

NodeKind scan_kinds[] = {{"CumsumBackward", "cumsum", nullptr, cumsum_backward},
                    {"CumprodBackward", "cumprod", nullptr, cumprod_backward}};

// A dtype= cast done (lucid/_ops/scan.py's _prepare). ops:: checks `dim`; the
// formulas index with it wrapped.
py::object scan(bool is_sum, py::handle x, int64_t dim) {
  const Tensor& h = tensor_arg(x.ptr(), is_sum ? "cumsum" : "cumprod", "input");
  py::object out = steal(wrap(is_sum ? ops::cumsum(h, dim) : ops::cumprod(h, dim)));
  if (dim < 0) dim += std::max<int64_t>(h.ndim(), 1);
  if (tensor_object(x.ptr())->requires_grad && grad_enabled() && is_floating(handle_of(out.ptr()).dtype())) {
    PyObject* input = x.ptr();
    PyObject* saved[2] = {input, out.ptr()};
    CppNode& n = record_node(scan_kinds[is_sum ? 0 : 1], &input, 1, saved, is_sum ? 0 : 2, out.ptr());
    n.dims = std::vector<int64_t>{dim};
  }
  return out;
}

}  // namespace

void init_scan(py::module_& m) {
  m.def("autograd_cumsum", [](py::handle x, int64_t dim) { return scan(true, x, dim); });
  m.def("autograd_cumprod", [](py::handle x, int64_t dim) { return scan(false, x, dim); });
  // lucid/_ops/scan.py, at import: the Functions whose recorded formulas serve create_graph.
  m.def("_register_scan", [](py::object cumsum, py::object cumprod) {
    scan_kinds[0].function = cumsum.release().ptr();
    scan_kinds[1].function = cumprod.release().ptr();
  });
}

}  // namespace lucid::autograd
