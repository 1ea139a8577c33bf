// The 2-D pools recorded in C++; see pool.h.
#include "autograd/pool.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/pool.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

using Ints = std::vector<int64_t>;

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
  r.grad[0] = ops::avg_pool2d_backward(g, n.saved_handles[0], params_slice(p, 0, 2), params_slice(p, 2, 2), params_slice(p, 4, 2),
                                       p[6] != 0, p[7] != 0, p[8]);
  return r;
}

InputGrads adaptive_avg_pool2d_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::adaptive_avg_pool2d_backward(g, n.saved_handles[0]);
  return r;
}

NodeKind max_pool2d_kind = {"MaxPool2dBackward", "max_pool2d", nullptr, max_pool2d_backward};
NodeKind avg_pool2d_kind = {"AvgPool2dBackward", "avg_pool2d", nullptr, avg_pool2d_backward};
NodeKind adaptive_kind = {"AdaptiveAvgPool2dBackward", "adaptive_avg_pool2d", nullptr, adaptive_avg_pool2d_backward};

}  // namespace

void init_pool(py::module_& m) {
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
      n.params = params_join({&kernel, &stride, &padding});
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
}

void register_pool(py::object max_pool2d, py::object avg_pool2d, py::object adaptive_avg_pool2d) {
  max_pool2d_kind.function = max_pool2d.release().ptr();
  avg_pool2d_kind.function = avg_pool2d.release().ptr();
  adaptive_kind.function = adaptive_avg_pool2d.release().ptr();
}

}  // namespace lucid::autograd
