// embedding recorded in C++; see embedding.h.
#include "autograd/embedding.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_object.h"
#include "core/errors.h"
#include "ops/embedding.h"

namespace lucid::autograd {

namespace py = pybind11;

namespace {

using Ints = std::vector<int64_t>;

// ----- embedding: params = the table's rows, padding_idx (-1: none)

InputGrads embedding_backward(const CppNode& n, const Tensor& g) {
  InputGrads r;
  r.grad[0] = ops::embedding_backward(g, n.saved_handles[0], n.params[0], n.params[1]);
  return r;
}

NodeKind embedding_kind = {"EmbeddingBackward", "embedding", nullptr, embedding_backward};

}  // namespace

void init_embedding(py::module_& m) {
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
}

void register_embedding(py::object embedding) { embedding_kind.function = embedding.release().ptr(); }

}  // namespace lucid::autograd
