// Creation, copies, dtype casts and device transfers: validated entry points.
#pragma once
#include "core/tensor.h"

namespace lucid::ops {

// An uninitialised tensor.
Tensor empty(const Shape& shape, DType dtype, Device device);
// A tensor filled with `value`, cast to `dtype`.
Tensor full(const Shape& shape, double value, DType dtype, Device device);
// Wraps a host buffer (kept alive by `owner`) as a CPU tensor without copying.
Tensor from_buffer(void* data, const Shape& shape, const Strides& strides, DType dtype,
                   std::shared_ptr<void> owner);
// x in contiguous row-major memory; x itself when it already is.
Tensor contiguous(const Tensor& x);
// x converted to `dtype`, always a new tensor.
Tensor astype(const Tensor& x, DType dtype);
// x on `device`; x itself when it is there already.
Tensor to_device(const Tensor& x, Device device);
// A copy of x in new memory.
Tensor clone(const Tensor& x);
// Forces evaluation of a lazy GPU tensor; no-op on the CPU stream.
void eval(const Tensor& x);
// Copies src (broadcast, cast) into dst in place; same device.
void copy_(const Tensor& dst, const Tensor& src);

// Requires every tensor to be on one device; TypeError naming `fn` otherwise.
Device common_device(const char* fn, std::initializer_list<const Tensor*> ts);

}  // namespace lucid::ops
