// Creation, copies, dtype casts and device transfers: validated entry points.
#pragma once
#include "core/tensor.h"

namespace lucid::ops {

Tensor empty(const Shape& shape, DType dtype, Device device);
Tensor full(const Shape& shape, double value, DType dtype, Device device);
// Wraps a host buffer (kept alive by `owner`) as a CPU tensor without copying.
Tensor from_buffer(void* data, const Shape& shape, const Strides& strides, DType dtype,
                   std::shared_ptr<void> owner);
Tensor contiguous(const Tensor& x);          // same tensor if already contiguous
Tensor astype(const Tensor& x, DType dtype);  // always a new tensor
Tensor to_device(const Tensor& x, Device device);  // same tensor if already there
Tensor clone(const Tensor& x);
// Forces evaluation of a lazy GPU tensor; no-op on the CPU stream.
void eval(const Tensor& x);
// Copies src (broadcast, cast) into dst in place; same device.
void copy_(const Tensor& dst, const Tensor& src);

// Requires every tensor to be on one device; TypeError naming `fn` otherwise.
Device common_device(const char* fn, std::initializer_list<const Tensor*> ts);

}  // namespace lucid::ops
