// lucid._C.backward_walk: the C++ backward walk (autograd/engine.h), called by
// lucid.autograd.engine.run_backward with grad mode already set; grad mode
// (autograd/grad_mode.h) and the ops recorded in C++ (autograd/node.h).
#include "autograd/arithmetic.h"
#include "autograd/basic_index.h"
#include "autograd/conv.h"
#include "autograd/copy.h"
#include "autograd/decomposition.h"
#include "autograd/elementwise.h"
#include "autograd/embedding.h"
#include "autograd/engine.h"
#include "autograd/fake_quantize_learnable.h"
#include "autograd/grad_mode.h"
#include "autograd/indexing.h"
#include "autograd/linalg.h"
#include "autograd/linear.h"
#include "autograd/loss.h"
#include "autograd/node.h"
#include "autograd/normalization.h"
#include "autograd/norms.h"
#include "autograd/pool.h"
#include "autograd/quantize.h"
#include "autograd/recurrent.h"
#include "autograd/reduction.h"
#include "autograd/scan.h"
#include "autograd/shape.h"
#include "autograd/special.h"
#include "autograd/unary.h"
#include "bindings/common.h"

namespace lucid::bindings {

void init_autograd(py::module_& m) {
  autograd::init_grad_mode(m);
  autograd::init_node(m);
  autograd::init_arithmetic(m);
  autograd::init_unary(m);
  autograd::init_elementwise_autograd(m);
  autograd::init_reduction(m);
  autograd::init_copy(m);
  autograd::init_scan(m);
  autograd::init_shape(m);
  autograd::init_linalg(m);
  autograd::init_decomposition(m);
  autograd::init_linear(m);
  autograd::init_conv(m);
  autograd::init_pool(m);
  autograd::init_embedding(m);
  // lucid/_ops/nn.py, at import: the Functions whose recorded formulas serve create_graph.
  m.def("_register_nn", [](py::object conv2d, py::object conv_transpose2d, py::object max_pool2d,
                           py::object avg_pool2d, py::object adaptive_avg_pool2d, py::object embedding) {
    autograd::register_conv(std::move(conv2d), std::move(conv_transpose2d));
    autograd::register_pool(std::move(max_pool2d), std::move(avg_pool2d), std::move(adaptive_avg_pool2d));
    autograd::register_embedding(std::move(embedding));
  });
  autograd::init_basic_index(m);
  autograd::init_indexing(m);
  autograd::init_normalization(m);
  autograd::init_norms(m);
  autograd::init_special_autograd(m);
  autograd::init_loss(m);
  autograd::init_quantize(m);
  autograd::init_fake_quantize_learnable(m);
  // lucid/quantization/primitives.py, at import: `_FakeQuantize` and `_FakeQuantizeLearnable`,
  // whose Python formulas serve create_graph (the learnable one refuses it: once_differentiable).
  m.def("_register_fake_quantize", [](py::object f, py::object learnable) {
    autograd::register_quantize(std::move(f));
    autograd::register_fake_quantize_learnable(std::move(learnable));
  });
  autograd::init_recurrent(m);
  // A CppNode's first-order formula, for autograd/engine.py's once-differentiable path.
  m.def("_cpp_backward", [](py::handle node, const py::tuple& grads) {
    if (!autograd::is_cpp_node(node.ptr())) throw py::type_error("_cpp_backward: expected a CppNode");
    return autograd::cpp_backward(node.ptr(), grads);
  });
  m.def(
      "backward_walk",
      [](py::sequence outputs, py::sequence grad_outputs, bool retain_graph, bool create_graph, py::object wanted,
         py::dict results, bool hooked, bool anomaly, py::dict held, py::module_ engine) {
        autograd::walk({std::move(outputs), std::move(grad_outputs), retain_graph, create_graph, std::move(wanted),
                        std::move(results), hooked, anomaly, std::move(held), std::move(engine)});
      },
      py::arg("outputs"), py::arg("grad_outputs"), py::arg("retain_graph"), py::arg("create_graph"),
      py::arg("wanted"), py::arg("results"), py::arg("hooked"), py::arg("anomaly"), py::arg("held"),
      py::arg("engine"));
}

}  // namespace lucid::bindings
