// The embedding family (ops/embedding.h): the lookup and its gradient.
#include "bindings/common.h"
#include "ops/embedding.h"

namespace lucid::bindings {

void init_embedding(py::module_& m) {
  m.def("embedding", &ops::embedding);
  m.def("embedding_backward", &ops::embedding_backward);
}

}  // namespace lucid::bindings
