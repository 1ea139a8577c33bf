// conv2d, the 2-D pools and embedding recorded in C++; see nn.h.
#include "autograd/nn.h"

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
#include "ops/embedding.h"
#include "ops/pool.h"
#include "ops/reduction.h"
#include "ops/shape.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

using Ints = std::vector<int64_t>;


// params[at, at + n) as a vector (a window argument the formula reads back).
Ints slice(const Ints& p, size_t at, size_t n) {
  return Ints(p.begin() + static_cast<std::ptrdiff_t>(at), p.begin() + static_cast<std::ptrdiff_t>(at + n));
}

// ----- conv2d: params = stride (2), padding (top, bottom, left, right), dilation (2), groups

InputGrads conv2d_backward(const CppNode& n, const Tensor& g) {
  std::vector<bool> want(3);
  for (int i = 0; i < 3; ++i) want[static_cast<size_t>(i)] = needs(n, i);
  const Ints& p = n.params;
  auto [gx, gw, gb] = ops::conv2d_backward(g, n.saved_handles[0], n.saved_handles[1], slice(p, 0, 2), slice(p, 2, 4),
                                           slice(p, 6, 2), p[8], want);
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
  const Ints stride = slice(p, 0, 2), padding = slice(p, 2, 4), dilation = slice(p, 6, 2);
  const Tensor &x = n.saved_handles[0], &w = n.saved_handles[1];
  InputGrads r;
  if (needs(n, 0))
    r.grad[0] = ops::conv2d(g, w, std::nullopt, stride, padding, dilation, p[8], "conv_transpose2d");
  if (needs(n, 1))
    r.grad[1] = std::get<1>(ops::conv2d_backward(x, g, w, stride, padding, dilation, p[8], {false, true, false}));
  if (needs(n, 2)) r.grad[2] = ops::sum(g, Ints{0, 2, 3}, false, std::nullopt);
  return r;
}

// ----- pools: `_C.<pool>_backward`, as the Functions' first-order branch of `_pool_grad`

InputGrads max_pool2d_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::max_pool2d_backward(g, n.saved_handles[1], n.saved_handles[0]);
  return r;
}

// params = kernel (2), stride (2), padding (2), ceil_mode, count_include_pad, divisor_override
InputGrads avg_pool2d_backward(const CppNode& n, const Tensor& g) {
  const Ints& p = n.params;
  InputGrads r;
  r.grad[0] = ops::avg_pool2d_backward(g, n.saved_handles[0], slice(p, 0, 2), slice(p, 2, 2), slice(p, 4, 2),
                                       p[6] != 0, p[7] != 0, p[8]);
  return r;
}

InputGrads adaptive_avg_pool2d_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::adaptive_avg_pool2d_backward(g, n.saved_handles[0]);
  return r;
}

// ----- embedding: params = the table's rows, padding_idx (-1: none)

InputGrads embedding_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::embedding_backward(g, n.saved_handles[0], n.params[0], n.params[1]);
  return r;
}

NodeKind conv2d_kind = {"Conv2dBackward", "conv2d", nullptr, conv2d_backward};
NodeKind max_pool2d_kind = {"MaxPool2dBackward", "max_pool2d", nullptr, max_pool2d_backward};
NodeKind avg_pool2d_kind = {"AvgPool2dBackward", "avg_pool2d", nullptr, avg_pool2d_backward};
NodeKind adaptive_kind = {"AdaptiveAvgPool2dBackward", "adaptive_avg_pool2d", nullptr, adaptive_avg_pool2d_backward};
NodeKind conv_transpose2d_kind = {"ConvTranspose2dBackward", "conv_transpose2d", nullptr,
                                  conv_transpose2d_backward};
NodeKind embedding_kind = {"EmbeddingBackward", "embedding", nullptr, embedding_backward};

Ints join(std::initializer_list<const Ints*> parts) {
  Ints r;
  for (const Ints* p : parts) r.insert(r.end(), p->begin(), p->end());
  return r;
}

}  // namespace

void init_nn(py::module_& m) {
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
      n.params = join({&stride, &padding, &dilation});
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
      n.params = join({&stride, &padding, &dilation});
      n.params.push_back(groups);
    }
    return out;
  });
  m.def("autograd_max_pool2d", [](py::handle x, const Ints& kernel, const Ints& stride, const Ints& padding,
                                  const Ints& dilation, bool ceil_mode) {
    const Tensor& hx = tensor_arg(x.ptr(), "max_pool2d", "input");
    auto [y, idx] = ops::max_pool2d(hx, kernel, stride, padding, dilation, ceil_mode);
    py::object out = steal(wrap(std::move(y))), indices = steal(wrap(std::move(idx)));
    if (records({x.ptr()}, out.ptr())) {  // the indices: not differentiable, saved for the formula
      PyObject* input = x.ptr();
      PyObject* saved[2] = {x.ptr(), indices.ptr()};
      record_node(max_pool2d_kind, &input, 1, saved, 2, out.ptr());
    }
    return py::make_tuple(out, indices);
  });
  m.def("autograd_avg_pool2d", [](py::handle x, const Ints& kernel, const Ints& stride, const Ints& padding,
                                  bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
    const Tensor& hx = tensor_arg(x.ptr(), "avg_pool2d", "input");
    py::object out =
        steal(wrap(ops::avg_pool2d(hx, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)));
    if (records({x.ptr()}, out.ptr())) {
      PyObject* input = x.ptr();
      CppNode& n = record_node(avg_pool2d_kind, &input, 1, &input, 1, out.ptr());
      n.params = join({&kernel, &stride, &padding});
      n.params.insert(n.params.end(), {ceil_mode ? 1 : 0, count_include_pad ? 1 : 0, divisor_override});
    }
    return out;
  });
  m.def("autograd_adaptive_avg_pool2d", [](py::handle x, const Ints& output_size) {
    const Tensor& hx = tensor_arg(x.ptr(), "adaptive_avg_pool2d", "input");
    py::object out = steal(wrap(ops::adaptive_avg_pool2d(hx, output_size)));
    if (records({x.ptr()}, out.ptr())) {
      PyObject* input = x.ptr();
      CppNode& n = record_node(adaptive_kind, &input, 1, &input, 1, out.ptr());
      n.params = output_size;
    }
    return out;
  });
  m.def("autograd_embedding", [](py::handle weight, py::handle indices, int64_t padding_idx) {
    const Tensor& hw = tensor_arg(weight.ptr(), "embedding", "weight");
    const Tensor& hi = tensor_arg(indices.ptr(), "embedding", "input");
    py::object out = steal(wrap(ops::embedding(hw, hi)));
    if (records({weight.ptr()}, out.ptr())) {
      PyObject* inputs[2] = {weight.ptr(), indices.ptr()};
      CppNode& n = record_node(embedding_kind, inputs, 2, &inputs[1], 1, out.ptr());
      n.params = {hw.ndim() > 0 ? hw.shape()[0] : 0, padding_idx};
    }
    return out;
  });
  // lucid/_ops/nn.py, at import: the Functions whose recorded formulas serve create_graph.
  m.def("_register_nn", [](py::object conv2d, py::object conv_transpose2d, py::object max_pool2d,
                           py::object avg_pool2d, py::object adaptive_avg_pool2d, py::object embedding) {
    conv2d_kind.function = conv2d.release().ptr();
    conv_transpose2d_kind.function = conv_transpose2d.release().ptr();
    max_pool2d_kind.function = max_pool2d.release().ptr();
    avg_pool2d_kind.function = avg_pool2d.release().ptr();
    adaptive_kind.function = adaptive_avg_pool2d.release().ptr();
    embedding_kind.function = embedding.release().ptr();
  });
}

}  // namespace lucid::autograd
