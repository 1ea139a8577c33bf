// Tensor: a shared handle to a TensorImpl. A CPU tensor is a strided view of
// a Storage; a GPU tensor holds an MLX array behind the opaque GpuArray (its
// definition lives in gpu/, so core never includes MLX's headers).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/device.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace lucid {

// A contiguous host buffer. `owner` keeps the memory alive: our own
// allocation, or a foreign one (a numpy array shared without copying).
struct Storage {
  void* data = nullptr;
  size_t nbytes = 0;
  std::shared_ptr<void> owner;
  // In-place writes to this buffer through any view of it (core/version.h).
  int64_t version = 0;
  static std::shared_ptr<Storage> allocate(size_t nbytes);  // 64-byte aligned, MemoryError on failure
};

// Byte count of a tensor of `shape` and `dtype`; ValueError naming `fn` when
// it overflows (the shape is too large to exist at all).
size_t checked_nbytes(const Shape& shape, DType dtype, const char* fn);
// MemoryError naming `what` unless `nbytes` fits in this process's memory:
// no more than physical memory, nor than the address space an RLIMIT_AS
// leaves. Both streams call it before allocating, so an impossible request
// fails cleanly instead of reaching an allocator that may crash (MLX's CPU
// backend dereferences a failed allocation).
void check_allocatable(size_t nbytes, const std::string& what);

struct GpuArray;  // wraps mlx::core::array; see gpu/array.h

struct TensorImpl {
  DType dtype = DType::Float32;
  Device device = Device::CPU;
  Shape shape;
  // CPU stream only.
  Strides strides;
  int64_t offset = 0;  // in elements
  std::shared_ptr<Storage> storage;
  // GPU stream only.
  std::shared_ptr<GpuArray> gpu;
  int64_t gpu_version = 0;  // a GPU tensor's own version counter (core/version.h)
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A new, uninitialised, contiguous CPU tensor.
  static Tensor empty_cpu(const Shape& shape, DType dtype);
  // A CPU view over existing storage.
  static Tensor view_cpu(std::shared_ptr<Storage> storage, const Shape& shape, const Strides& strides,
                         int64_t offset, DType dtype);

  bool defined() const { return impl_ != nullptr; }
  TensorImpl& impl() const { return *impl_; }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  DType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->device; }
  bool is_cpu() const { return impl_->device == Device::CPU; }
  const Shape& shape() const { return impl_->shape; }
  int ndim() const { return static_cast<int>(impl_->shape.size()); }
  int64_t numel() const { return lucid::numel(impl_->shape); }
  int64_t size(int axis) const { return impl_->shape[axis]; }

  // CPU only.
  const Strides& strides() const { return impl_->strides; }
  int64_t offset() const { return impl_->offset; }
  bool is_contiguous() const;
  void* raw_data() const;  // storage base + offset
  template <class T> T* data() const { return static_cast<T*>(raw_data()); }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace lucid
