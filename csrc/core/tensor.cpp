#include "core/tensor.h"

#include <cstdlib>
#include <new>

#include "core/errors.h"

namespace lucid {

std::shared_ptr<Storage> Storage::allocate(size_t nbytes) {
  auto s = std::make_shared<Storage>();
  size_t padded = ((nbytes + 63) / 64) * 64;
  if (padded == 0) padded = 64;
  void* p = std::aligned_alloc(64, padded);
  if (!p) throw RuntimeError("out of memory allocating " + std::to_string(nbytes) + " bytes");
  s->data = p;
  s->nbytes = nbytes;
  s->owner = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  return s;
}

Tensor Tensor::empty_cpu(const Shape& shape, DType dtype) {
  for (int64_t d : shape)
    check(d >= 0, "empty(): negative dimension in shape " + shape_str(shape));
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = dtype;
  impl->device = Device::CPU;
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->storage = Storage::allocate(static_cast<size_t>(lucid::numel(shape)) * itemsize(dtype));
  return Tensor(impl);
}

Tensor Tensor::view_cpu(std::shared_ptr<Storage> storage, const Shape& shape, const Strides& strides,
                        int64_t offset, DType dtype) {
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = dtype;
  impl->device = Device::CPU;
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->storage = std::move(storage);
  return Tensor(impl);
}

bool Tensor::is_contiguous() const {
  const auto& sh = impl_->shape;
  const auto& st = impl_->strides;
  int64_t expected = 1;
  for (int i = static_cast<int>(sh.size()) - 1; i >= 0; --i) {
    if (sh[i] == 1) continue;
    if (sh[i] == 0) return true;
    if (st[i] != expected) return false;
    expected *= sh[i];
  }
  return true;
}

void* Tensor::raw_data() const {
  return static_cast<char*>(impl_->storage->data) + impl_->offset * static_cast<int64_t>(itemsize(impl_->dtype));
}

}  // namespace lucid
