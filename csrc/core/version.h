// Version counters: how many in-place writes a tensor's memory has had.
// Autograd saves a tensor's version with it and raises in backward when the
// value changed since (PyTorch's "modified by an inplace operation" check).
// On the CPU stream the counter is Storage::version, so every view of one
// buffer shares it and a write through a view bumps its base; on the GPU
// stream MLX arrays are values (a GPU view is a copy), so each TensorImpl
// has its own (TensorImpl::gpu_version).
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid {

int64_t tensor_version(const Tensor& t);
void set_tensor_version(const Tensor& t, int64_t version);

}  // namespace lucid
