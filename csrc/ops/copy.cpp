#include "ops/copy.h"

#include "core/errors.h"
#include "cpu/copy.h"
#include "gpu/copy.h"
#include "gpu/transfer.h"

namespace lucid::ops {

Device common_device(const char* fn, std::initializer_list<const Tensor*> ts) {
  const Tensor* first = nullptr;
  for (const Tensor* t : ts) {
    // `if`, not check(cond, msg): every op calls this, so the message is built only on failure.
    if (!t->defined()) throw TypeError(std::string(fn) + "(): got an undefined tensor");
    if (!first) first = t;
    else if (t->device() != first->device())
      throw DeviceError(std::string(fn) + "(): expected all tensors on one device, got '" +
                       device_name(first->device()) + "' and '" + device_name(t->device()) +
                       "'; move one with .to()");
  }
  return first ? first->device() : Device::CPU;
}

// Non-negative dimensions whose byte count fits in 64 bits (ValueError), and
// for the GPU stream a size this process can allocate (MemoryError), before
// MLX sees the shape.
static void check_shape(const Shape& shape, const char* fn, DType dtype = DType::UInt8, Device device = Device::CPU) {
  for (int64_t d : shape)
    check(d >= 0, std::string(fn) + "(): argument 'size' must have non-negative dimensions, got " + shape_str(shape));
  size_t nbytes = checked_nbytes(shape, dtype, fn);
  if (device == Device::GPU) check_allocatable(nbytes, std::string(fn) + "(): out of memory on the GPU stream");
}

// MLX GPUs have no float64: the GPU stream refuses it up front, whatever MLX backend runs it.
void reject_gpu_float64(DType dtype, Device device, const char* fn) {
  check<TypeError>(!(device == Device::GPU && dtype == DType::Float64),
                   std::string(fn) + "(): float64 is not supported on the GPU stream (MLX GPUs have no float64); "
                   "use float32");
}

Tensor empty(const Shape& shape, DType dtype, Device device) {
  reject_gpu_float64(dtype, device, "empty");
  check_shape(shape, "empty", dtype, device);
  if (device == Device::CPU) return Tensor::empty_cpu(shape, dtype);
  return gpu::full(shape, dtype, 0.0);  // MLX has no uninitialised arrays worth the name
}

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  reject_gpu_float64(dtype, device, "full");
  check_shape(shape, "full", dtype, device);
  if (device == Device::GPU) return gpu::full(shape, dtype, value);
  Tensor t = Tensor::empty_cpu(shape, dtype);
  cpu::fill(t, value);
  return t;
}

Tensor from_buffer(void* data, const Shape& shape, const Strides& strides, DType dtype,
                   std::shared_ptr<void> owner) {
  check_shape(shape, "from_numpy");
  check(shape.size() == strides.size(), "from_numpy(): shape and strides differ in length");
  auto storage = std::make_shared<Storage>();
  storage->data = data;
  storage->owner = std::move(owner);
  int64_t span = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    check(strides[i] >= 0, "from_numpy(): negative strides are not supported; pass a copy");
    if (shape[i] > 0) span += (shape[i] - 1) * strides[i];
  }
  storage->nbytes = numel(shape) == 0 ? 0 : static_cast<size_t>(span) * itemsize(dtype);
  return Tensor::view_cpu(storage, shape, strides, 0, dtype);
}

Tensor contiguous(const Tensor& x) {
  common_device("contiguous", {&x});
  if (x.device() == Device::GPU) return gpu::contiguous(x);
  if (x.is_contiguous()) return x;
  Tensor out = Tensor::empty_cpu(x.shape(), x.dtype());
  cpu::copy_into(x, out);
  return out;
}

Tensor astype(const Tensor& x, DType dtype) {
  common_device("to", {&x});
  if (x.device() == Device::GPU) return gpu::astype(x, dtype);
  Tensor out = Tensor::empty_cpu(x.shape(), dtype);
  cpu::copy_into(x, out);
  return out;
}

Tensor to_device(const Tensor& x, Device device) {
  common_device("to", {&x});
  if (x.device() == device) return x;
  check<TypeError>(!(device == Device::GPU && x.dtype() == DType::Float64),
                   "to(): float64 is not supported on the GPU stream (MLX GPUs have no float64); "
                   "convert with .to(lucid.float32) first");
  if (device == Device::GPU) return gpu::upload(contiguous(x));
  return gpu::download(x);
}

Tensor clone(const Tensor& x) { return astype(x, x.dtype()); }

void eval(const Tensor& x) {
  common_device("eval", {&x});
  if (x.device() == Device::GPU) gpu::eval(x);
}

void copy_(const Tensor& dst, const Tensor& src) {
  common_device("copy_", {&dst, &src});
  check(broadcast_shapes(src.shape(), dst.shape(), "copy_") == dst.shape(),
        "copy_(): source of shape " + shape_str(src.shape()) + " cannot be broadcast to destination shape " +
            shape_str(dst.shape()));
  if (dst.device() == Device::GPU) {
    gpu::assign(dst, src);
    return;
  }
  // A source that shares memory with the destination (x[1:] = x[:-1]) is
  // copied out first so the write cannot read its own output.
  bool aliased = src.impl().storage == dst.impl().storage;
  cpu::copy_into(aliased ? clone(src) : src, dst);
}

}  // namespace lucid::ops
