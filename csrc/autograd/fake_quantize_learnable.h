// fake_quantize_learnable (LSQ / LSQ+) run and recorded in C++ (node.h):
// `_C.autograd_fake_quantize_learnable(x, scale, zero_point, quant_min,
// quant_max, ch_axis, grad_factor)` records
// FakeQuantizeLearnableBackward over (x, scale, zero_point), whose formula is
// the fused ops::fake_quantize_learnable_backward (once differentiable).
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_fake_quantize_learnable(pybind11::module_& m);
// The Python Function (`_C._register_fake_quantize`, bindings/autograd.cpp)
// whose formula serves create_graph (it refuses it: once differentiable).
void register_fake_quantize_learnable(pybind11::object learnable);

}  // namespace lucid::autograd
