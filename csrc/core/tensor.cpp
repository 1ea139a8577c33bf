#include "core/tensor.h"

#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/errors.h"

namespace lucid {

std::shared_ptr<Storage> Storage::allocate(size_t nbytes) {
  auto s = std::make_shared<Storage>();
  size_t padded = ((nbytes + 63) / 64) * 64;
  if (padded == 0) padded = 64;
  // Buffers of 32 MiB and more are always fresh mmaps in glibc (its largest
  // mmap threshold), so every such output pays a page fault per 4 KiB, which
  // costs more than the memory-bound kernel that fills it. Those are 2 MiB
  // aligned and advised onto transparent huge pages, as numpy does. Smaller
  // buffers stay with malloc, which recycles freed heap memory without faults.
  constexpr size_t kHugePage = size_t{2} << 20;
  bool huge = padded >= (size_t{32} << 20);
  if (huge) padded = (padded + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(huge ? kHugePage : 64, padded);
  if (!p) throw RuntimeError("out of memory allocating " + std::to_string(nbytes) + " bytes");
#if defined(MADV_HUGEPAGE)
  if (huge) madvise(p, padded, MADV_HUGEPAGE);  // advice only: failure changes nothing
#endif
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
