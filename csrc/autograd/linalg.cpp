// matmul / mm / bmm recorded in C++; see linalg.h.
#include "autograd/linalg.h"

#include <optional>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/linalg.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// The last two axes swapped (lucid/_ops/linalg.py's _mT: a permuted view).
Tensor matrix_transpose(const Tensor& t) {
  std::vector<int64_t> order(static_cast<size_t>(t.ndim()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::swap(order[order.size() - 1], order[order.size() - 2]);
  return ops::permute(t, order);
}

// x.reshape(shape): x itself when it has that shape.
Tensor reshaped_to(const Tensor& x, const Shape& shape) { return x.shape() == shape ? x : ops::reshape(x, shape); }

// x with a new axis of size 1 at `axis` (negative: counted from the end of the result).
Tensor unsqueezed(const Tensor& x, int axis) {
  Shape s = x.shape();
  int at = axis < 0 ? static_cast<int>(s.size()) + 1 + axis : axis;
  s.insert(s.begin() + at, 1);
  return ops::reshape(x, s);
}

// `_Matmul.backward` with nothing recorded: the products are ops::matmul.
InputGrads matmul_backward(const CppNode& n, const Tensor& g) {
  const Tensor &a = n.saved_handles[0], &b = n.saved_handles[1];
  Tensor a2 = a.ndim() == 1 ? ops::reshape(a, {1, a.shape()[0]}) : a;
  Tensor b2 = b.ndim() == 1 ? ops::reshape(b, {b.shape()[0], 1}) : b;
  Tensor g2 = g;
  if (a.ndim() == 1) g2 = unsqueezed(g2, b.ndim() > 1 ? -2 : 0);
  if (b.ndim() == 1) g2 = unsqueezed(g2, -1);
  InputGrads r;
  if (needs(n, 0))
    r.grad[0] = reshaped_to(sum_to_shape(ops::matmul(g2, matrix_transpose(b2)), a2.shape()), a.shape());
  if (needs(n, 1))
    r.grad[1] = reshaped_to(sum_to_shape(ops::matmul(matrix_transpose(a2), g2), b2.shape()), b.shape());
  return r;
}

NodeKind matmul_kind = {"MatmulBackward", "matmul", nullptr, matmul_backward};

}  // namespace

void init_linalg(py::module_& m) {
  m.def("autograd_matmul", [](py::handle a, py::handle b, const std::string& which) {
    const Tensor& ha = tensor_arg(a.ptr(), which.c_str(), "input");
    const Tensor& hb = tensor_arg(b.ptr(), which.c_str(), which == "matmul" ? "other" : "mat2");
    Tensor out = which == "mm" ? ops::mm(ha, hb) : which == "bmm" ? ops::bmm(ha, hb) : ops::matmul(ha, hb);
    py::object result = py::reinterpret_steal<py::object>(wrap(std::move(out)));
    if (!result) throw py::error_already_set();
    if ((tensor_object(a.ptr())->requires_grad || tensor_object(b.ptr())->requires_grad) && grad_enabled() &&
        is_floating(handle_of(result.ptr()).dtype())) {
      PyObject* inputs[2] = {a.ptr(), b.ptr()};
      record_node(matmul_kind, inputs, 2, inputs, 2, result.ptr());
    }
    return result;
  });
  // lucid/_ops/linalg.py, at import: `_Matmul`, whose recorded formula serves create_graph.
  m.def("_register_linalg", [](py::object matmul) { matmul_kind.function = matmul.release().ptr(); });
}

}  // namespace lucid::autograd
