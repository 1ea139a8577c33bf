// Host <-> device copies and evaluation for the GPU stream.
#pragma once
#include "core/tensor.h"

namespace lucid::gpu {

Tensor upload(const Tensor& cpu_contiguous);  // CPU tensor -> new GPU tensor
Tensor download(const Tensor& gpu_tensor);    // evaluates, then copies to a new CPU tensor
void eval(const Tensor& t);
// dst's array is replaced by src converted and broadcast to dst's shape.
void assign(const Tensor& dst, const Tensor& src);

}  // namespace lucid::gpu
