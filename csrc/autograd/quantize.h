// fake_quantize run and recorded in C++ (node.h): QAT's per-step op.
// `_C.autograd_fake_quantize(x, scale, zero_point, quant_min, quant_max,
// ch_axis, group_size, axis)` (qparams as tensors, any granularity) and
// `_C.autograd_fake_quantize_scalar(x, scale, zero_point, quant_min,
// quant_max)` (per-tensor, Python numbers) run the fused ops::fake_quantize,
// which also gives the straight-through mask, and, when x requires grad and
// grad mode is on, record FakeQuantizeBackward over x with the mask saved.
// Its first-order formula is ops::fake_quantize_backward (dy where the mask
// passes, else 0); under create_graph the walk calls `_FakeQuantize` in
// lucid/quantization/primitives.py (lucid.where on the mask, recorded).
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_quantize(pybind11::module_& m);
// The Python Function (`_C._register_fake_quantize`, bindings/autograd.cpp)
// whose recorded formula serves create_graph.
void register_quantize(pybind11::object fake_quantize);

}  // namespace lucid::autograd
