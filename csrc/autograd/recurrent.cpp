// The recurrent layers recorded in C++; see recurrent.h.
#include "autograd/recurrent.h"

#include <initializer_list>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "ops/copy.h"
#include "ops/recurrent.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {


// saved: (w_hh, h0, c0); buffers: (out, acts, cells); params: (reverse).
InputGrads lstm_backward(const CppNode& n, const std::vector<std::optional<Tensor>>& g) {
  auto [d_gx, d_w, d_h0, d_c0] =
      ops::lstm_layer_backward(g[0], g[1], g[2], n.saved_handles[0], n.saved_handles[1], n.saved_handles[2],
                               n.buffers[0], n.buffers[1], n.buffers[2], n.params[0] != 0);
  InputGrads r(4);
  Tensor grads[4] = {std::move(d_gx), std::move(d_w), std::move(d_h0), std::move(d_c0)};
  for (int i = 0; i < 4; ++i)
    if (needs(n, i)) r.grad[static_cast<size_t>(i)] = std::move(grads[i]);
  return r;
}

// inputs: (gx, w_hh, b_hh or None, h0); saved: (w_hh, h0); buffers: (out, acts, hn);
// params: (reverse, has b_hh).
InputGrads gru_backward(const CppNode& n, const std::vector<std::optional<Tensor>>& g) {
  auto [d_gx, d_w, d_b, d_h0] = ops::gru_layer_backward(g[0], g[1], n.saved_handles[0], n.params[1] != 0,
                                                        n.saved_handles[1], n.buffers[0], n.buffers[1],
                                                        n.buffers[2], n.params[0] != 0);
  InputGrads r(4);
  if (needs(n, 0)) r.grad[0] = std::move(d_gx);
  if (needs(n, 1)) r.grad[1] = std::move(d_w);
  if (needs(n, 2) && d_b) r.grad[2] = std::move(*d_b);
  if (needs(n, 3)) r.grad[3] = std::move(d_h0);
  return r;
}

NodeKind lstm_kind = {"LSTMLayerBackward", "lstm_layer", nullptr, nullptr, false, lstm_backward};
NodeKind gru_kind = {"GRULayerBackward", "gru_layer", nullptr, nullptr, false, gru_backward};

bool wanted(std::initializer_list<PyObject*> inputs) {
  if (!grad_enabled()) return false;
  for (PyObject* t : inputs)
    if (t != Py_None && tensor_object(t)->requires_grad) return true;
  return false;
}

py::tuple lstm_layer(py::handle gx, py::handle w_hh, py::handle h0, py::handle c0, bool reverse) {
  const char* fn = "lstm_layer";
  auto [out, h_n, c_n, acts, cells] =
      ops::lstm_layer_forward(tensor_arg(gx.ptr(), fn, "gx"), tensor_arg(w_hh.ptr(), fn, "w_hh"),
                              tensor_arg(h0.ptr(), fn, "h0"), tensor_arg(c0.ptr(), fn, "c0"), reverse);
  // The backward reads the output as it was: the caller may overwrite the returned one in place.
  Tensor kept = wanted({gx.ptr(), w_hh.ptr(), h0.ptr(), c0.ptr()}) ? ops::clone(out) : Tensor();
  py::object o = steal(wrap(std::move(out))), h = steal(wrap(std::move(h_n))), c = steal(wrap(std::move(c_n)));
  if (kept.defined()) {
    PyObject* inputs[4] = {gx.ptr(), w_hh.ptr(), h0.ptr(), c0.ptr()};
    PyObject* outputs[3] = {o.ptr(), h.ptr(), c.ptr()};
    CppNode& n = record_outputs(lstm_kind, inputs, 4, inputs + 1, 3, outputs, 3);
    n.buffers = {std::move(kept), std::move(acts), std::move(cells)};
    n.params = {reverse ? 1 : 0};
  }
  return py::make_tuple(o, h, c);
}

py::tuple gru_layer(py::handle gx, py::handle w_hh, py::handle b_hh, py::handle h0, bool reverse) {
  const char* fn = "gru_layer";
  std::optional<Tensor> b;
  if (!b_hh.is_none()) b = tensor_arg(b_hh.ptr(), fn, "b_hh");
  auto [out, h_n, acts, hn] = ops::gru_layer_forward(tensor_arg(gx.ptr(), fn, "gx"), tensor_arg(w_hh.ptr(), fn, "w_hh"),
                                                      b, tensor_arg(h0.ptr(), fn, "h0"), reverse);
  Tensor kept = wanted({gx.ptr(), w_hh.ptr(), b_hh.ptr(), h0.ptr()}) ? ops::clone(out) : Tensor();
  py::object o = steal(wrap(std::move(out))), h = steal(wrap(std::move(h_n)));
  if (kept.defined()) {
    PyObject* inputs[4] = {gx.ptr(), w_hh.ptr(), b_hh.ptr(), h0.ptr()};
    PyObject* saved[2] = {w_hh.ptr(), h0.ptr()};
    PyObject* outputs[2] = {o.ptr(), h.ptr()};
    CppNode& n = record_outputs(gru_kind, inputs, 4, saved, 2, outputs, 2);
    n.buffers = {std::move(kept), std::move(acts), std::move(hn)};
    n.params = {reverse ? 1 : 0, b ? 1 : 0};
  }
  return py::make_tuple(o, h);
}

}  // namespace

void init_recurrent(py::module_& m) {
  m.def("autograd_lstm_layer", &lstm_layer);
  m.def("autograd_gru_layer", &gru_layer);
  // lucid/_ops/recurrent.py, at import: `_LSTMLayer` / `_GRULayer` (once differentiable: they
  // name the nodes' Python side; the formula is the fused kernel here).
  m.def("_register_recurrent", [](py::object lstm, py::object gru) {
    lstm_kind.function = lstm.release().ptr();
    gru_kind.function = gru.release().ptr();
  });
}

}  // namespace lucid::autograd
