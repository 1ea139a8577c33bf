// linear recorded in C++; see linear.h.
#include "autograd/linear.h"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/linear.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

InputGrads linear_backward(const CppNode& n, const Tensor& g) {
  std::vector<bool> want(3);
  for (int i = 0; i < 3; ++i) want[static_cast<size_t>(i)] = needs(n, i);
  auto [gx, gw, gb] = ops::linear_backward(g, n.saved_handles[0], n.saved_handles[1], want);
  InputGrads r;
  r.grad[0] = std::move(gx);
  r.grad[1] = std::move(gw);
  r.grad[2] = std::move(gb);
  return r;
}

NodeKind linear_kind = {"LinearBackward", "linear", nullptr, linear_backward};

}  // namespace

void init_linear(py::module_& m) {
  m.def("autograd_linear", [](py::handle x, py::handle weight, py::handle bias) {
    const Tensor& hx = tensor_arg(x.ptr(), "linear", "input");
    const Tensor& hw = tensor_arg(weight.ptr(), "linear", "weight");
    std::optional<Tensor> hb;
    if (!bias.is_none()) hb = tensor_arg(bias.ptr(), "linear", "bias");
    py::object out = py::reinterpret_steal<py::object>(wrap(ops::linear(hx, hw, hb)));
    if (!out) throw py::error_already_set();
    bool needs = tensor_object(x.ptr())->requires_grad || tensor_object(weight.ptr())->requires_grad ||
                 (hb && tensor_object(bias.ptr())->requires_grad);
    if (needs && grad_enabled() && is_floating(handle_of(out.ptr()).dtype())) {
      PyObject* inputs[3] = {x.ptr(), weight.ptr(), bias.ptr()};
      record_node(linear_kind, inputs, 3, inputs, 2, out.ptr());
    }
    return out;
  });
  // lucid/_ops/nn.py, at import: `_Linear`, whose recorded formula serves create_graph.
  m.def("_register_linear", [](py::object linear) { linear_kind.function = linear.release().ptr(); });
}

}  // namespace lucid::autograd
