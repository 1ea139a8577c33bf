// conv2d and conv_transpose2d recorded in C++; see conv.h.
#include "autograd/conv.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/conv.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/reduction.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

using Ints = std::vector<int64_t>;

// ----- conv2d: params = stride (2), padding (top, bottom, left, right), dilation (2), groups

InputGrads conv2d_backward(const CppNode& n, const Tensor& g) {
  std::vector<bool> want(3);
  for (int i = 0; i < 3; ++i) want[static_cast<size_t>(i)] = needs(n, i);
  const Ints& p = n.params;
  auto [gx, gw, gb] = ops::conv2d_backward(g, n.saved_handles[0], n.saved_handles[1], params_slice(p, 0, 2),
                                           params_slice(p, 2, 4), params_slice(p, 6, 2), p[8], want);
  InputGrads r;
  r.grad[0] = std::move(gx);
  r.grad[1] = std::move(gw);
  r.grad[2] = std::move(gb);
  return r;
}

// ----- conv_transpose2d (params as conv2d's): `_ConvTranspose2d.backward`'s first-order
// branch, each gradient from conv2d's kernels: dx = conv2d(g, w), dw = conv2d's weight
// gradient with x and g in swapped roles, db = g summed over (N, H, W).

InputGrads conv_transpose2d_backward(const CppNode& n, const Tensor& g) {
  const Ints& p = n.params;
  const Ints stride = params_slice(p, 0, 2), padding = params_slice(p, 2, 4), dilation = params_slice(p, 6, 2);
  const Tensor &x = n.saved_handles[0], &w = n.saved_handles[1];
  InputGrads r;
  if (needs(n, 0))
    r.grad[0] = ops::conv2d(g, w, std::nullopt, stride, padding, dilation, p[8], "conv_transpose2d");
  if (needs(n, 1))
    r.grad[1] = std::get<1>(ops::conv2d_backward(x, g, w, stride, padding, dilation, p[8], {false, true, false}));
  if (needs(n, 2)) r.grad[2] = ops::sum(g, Ints{0, 2, 3}, false, std::nullopt);
  return r;
}

NodeKind conv2d_kind = {"Conv2dBackward", "conv2d", nullptr, conv2d_backward};
NodeKind conv_transpose2d_kind = {"ConvTranspose2dBackward", "conv_transpose2d", nullptr,
                                  conv_transpose2d_backward};

}  // namespace

void init_conv(py::module_& m) {
  m.def("autograd_conv2d", [](py::handle x, py::handle weight, py::handle bias, const Ints& stride,
                              const Ints& padding, const Ints& dilation, int64_t groups, const std::string& fn) {
    const Tensor& hx = tensor_arg(x.ptr(), fn.c_str(), "input");
    const Tensor& hw = tensor_arg(weight.ptr(), fn.c_str(), "weight");
    std::optional<Tensor> hb;
    if (!bias.is_none()) hb = tensor_arg(bias.ptr(), fn.c_str(), "bias");
    py::object out = steal(wrap(ops::conv2d(hx, hw, hb, stride, padding, dilation, groups, fn)));
    if (records({x.ptr(), weight.ptr(), bias.ptr()}, out.ptr())) {
      PyObject* inputs[3] = {x.ptr(), weight.ptr(), bias.ptr()};
      CppNode& n = record_node(conv2d_kind, inputs, 3, inputs, 2, out.ptr());
      n.params = params_join({&stride, &padding, &dilation});
      n.params.push_back(groups);
    }
    return out;
  });
  // The transposed convolution as conv2d's input gradient (of a zero output of `out_shape`,
  // the kernel reads only its shape), plus the bias: `_ConvTranspose2d.forward`'s ops.
  m.def("autograd_conv_transpose2d", [](py::handle x, py::handle weight, py::handle bias, const Ints& stride,
                                        const Ints& padding, const Ints& dilation, int64_t groups,
                                        const Shape& out_shape) {
    const Tensor& hx = tensor_arg(x.ptr(), "conv_transpose2d", "input");
    const Tensor& hw = tensor_arg(weight.ptr(), "conv_transpose2d", "weight");
    std::optional<Tensor> hb;
    if (!bias.is_none()) hb = tensor_arg(bias.ptr(), "conv_transpose2d", "bias");
    Tensor y_like = ops::full(out_shape, 0.0, hx.dtype(), hx.device());
    Tensor y = *std::get<0>(ops::conv2d_backward(hx, y_like, hw, stride, padding, dilation, groups,
                                                 {true, false, false}));
    if (hb) y = ops::add(y, ops::reshape(*hb, Shape{1, hb->numel(), 1, 1}));
    py::object out = steal(wrap(std::move(y)));
    if (records({x.ptr(), weight.ptr(), bias.ptr()}, out.ptr())) {
      PyObject* inputs[3] = {x.ptr(), weight.ptr(), bias.ptr()};
      CppNode& n = record_node(conv_transpose2d_kind, inputs, 3, inputs, 2, out.ptr());
      n.params = params_join({&stride, &padding, &dilation});
      n.params.push_back(groups);
    }
    return out;
  });
}

void register_conv(py::object conv2d, py::object conv_transpose2d) {
  conv2d_kind.function = conv2d.release().ptr();
  conv_transpose2d_kind.function = conv_transpose2d.release().ptr();
}

}  // namespace lucid::autograd
