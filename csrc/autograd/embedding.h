// embedding run and recorded in C++ (node.h): `_C.autograd_embedding(weight,
// indices, padding_idx)` runs ops::embedding and, when grad mode is on and the
// table requires grad, attaches EmbeddingBackward saving the indices, with the
// table's rows and padding_idx in `params`. The first-order backward is
// ops::embedding_backward; under create_graph the walk runs lucid/_ops/nn.py's
// Function.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_embedding(pybind11::module_& m);
// The Python Function (`_C._register_nn`, bindings/autograd.cpp) whose
// recorded formula serves create_graph.
void register_embedding(pybind11::object embedding);

}  // namespace lucid::autograd
