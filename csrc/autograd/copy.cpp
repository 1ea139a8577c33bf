// to (dtype casts, device moves) and clone recorded in C++; see copy.h.
#include "autograd/copy.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/device.h"
#include "core/dtype.h"
#include "ops/copy.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

// `_To.backward`: lucid.to(g, dtype=the input's dtype (when floating), device=the
// input's device), which is g itself when it is there already. node.params[0]:
// the input's device (lucid::Device); node.input_dtype: its dtype.
InputGrads to_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  Device device = static_cast<Device>(n.params[0]);
  Tensor gx = g;
  bool moved = false;
  if (gx.device() != device) {
    gx = ops::to_device(gx, device);
    moved = true;
  }
  if (is_floating(n.input_dtype) && gx.dtype() != n.input_dtype) {
    gx = ops::astype(gx, n.input_dtype);
    moved = true;
  }
  if (moved)
    r.grad[0] = std::move(gx);
  else
    r.pass[0] = true;
  return r;
}

// `_Clone.backward`: the gradient as it is.
InputGrads clone_backward(const CppNode&, const Tensor&) {
  InputGrads r;
  r.pass[0] = true;
  return r;
}

NodeKind copy_kinds[] = {{"ToBackward", "to", nullptr, to_backward}, {"CloneBackward", "clone", nullptr, clone_backward}};

}  // namespace

void init_copy(py::module_& m) {
  // lucid.to's arguments arrive checked and normalised (a dtype name, "cpu" / "gpu"),
  // and only when something changes or `copy` asks for a new tensor.
  m.def("autograd_to", [](py::handle x, const std::optional<std::string>& dtype,
                          const std::optional<std::string>& device, bool copy) {
    const Tensor& h = tensor_arg(x.ptr(), "to", "input");
    Tensor t = h;
    bool moved = false;
    if (device) {
      Device d = device_from_name(*device);
      if (d != t.device()) {
        t = ops::to_device(t, d);
        moved = true;
      }
    }
    if (dtype) {
      DType dt = dtype_from_name(*dtype);
      if (dt != t.dtype()) {
        t = ops::astype(t, dt);
        moved = true;
      }
    }
    if (copy && !moved) t = ops::clone(t);
    py::object out = steal(wrap(std::move(t)));
    if (records({x.ptr()}, out.ptr())) {
      PyObject* input = x.ptr();
      CppNode& n = record_node(copy_kinds[0], &input, 1, nullptr, 0, out.ptr());
      n.input_dtype = h.dtype();
      n.params = {static_cast<int64_t>(h.device())};
    }
    return out;
  });
  m.def("autograd_clone", [](py::handle x) {
    const Tensor& h = tensor_arg(x.ptr(), "clone", "input");
    py::object out = steal(wrap(ops::clone(h)));
    if (records({x.ptr()}, out.ptr())) {
      PyObject* input = x.ptr();
      record_node(copy_kinds[1], &input, 1, nullptr, 0, out.ptr());
    }
    return out;
  });
  // lucid/_ops/copy.py, at import: the Functions whose recorded formulas serve create_graph.
  m.def("_register_copy", [](py::object to, py::object clone) {
    copy_kinds[0].function = to.release().ptr();
    copy_kinds[1].function = clone.release().ptr();
  });
}

}  // namespace lucid::autograd
