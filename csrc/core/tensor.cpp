#include "core/tensor.h"

#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "core/errors.h"

namespace lucid {

namespace {

// Buffers of 32 MiB and more are always fresh mmaps in glibc (its largest mmap
// threshold): every such output would pay a page fault per 4 KiB and the
// kernel's zeroing, which costs more than the memory-bound kernel that fills
// it. They are 2 MiB aligned, advised onto transparent huge pages (as numpy
// does), and a few freed ones are kept for reuse, since loops allocate the
// same sizes again and again. Smaller buffers stay with malloc, which already
// recycles freed heap memory.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kLargeBuffer = size_t{32} << 20;
constexpr size_t kCacheBytes = size_t{512} << 20;  // idle memory kept at most

// LUCID_KEEP_FREED_MEMORY=0 turns both reuse mechanisms below off, for
// processes that would rather return idle memory than run faster.
bool keep_freed_memory() {
  static const bool keep = [] {
    const char* v = std::getenv("LUCID_KEEP_FREED_MEMORY");
    return !(v && std::string(v) == "0");
  }();
  return keep;
}

class LargeBufferCache {
 public:
  static LargeBufferCache& get() {
    static auto* cache = new LargeBufferCache();  // leaked: frees may run during interpreter exit
    return *cache;
  }
  void* take(size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < blocks_.size(); ++i)
      if (blocks_[i].second == size) {
        void* p = blocks_[i].first;
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        held_ -= size;
        return p;
      }
    return nullptr;
  }
  void give(void* p, size_t size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (keep_freed_memory() && held_ + size <= kCacheBytes) {
        blocks_.emplace_back(p, size);
        held_ += size;
        return;
      }
    }
    std::free(p);
  }
  // Frees every idle block (an allocation failed: the memory is needed).
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& block : blocks_) std::free(block.first);
    blocks_.clear();
    held_ = 0;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<void*, size_t>> blocks_;
  size_t held_ = 0;
};

// Buffers under kLargeBuffer come from malloc. glibc serves a freed-then-
// reallocated megabyte-sized buffer from fresh mmap'd (or freshly trimmed)
// pages by default, so every training step page-faulted and zeroed its
// activations and gradients again: that cost as much as a small conv's GEMMs.
// Keeping them on the heap (buffers from kLargeBuffer up have their own cache)
// and letting the heap hold up to 128 MiB of freed memory makes reuse free.
void keep_freed_buffers_on_heap() {
#if defined(__GLIBC__)
  if (!keep_freed_memory()) return;
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, static_cast<int>(kLargeBuffer));
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
  });
#endif
}

size_t physical_memory() {
  static const size_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : SIZE_MAX;
  }();
  return bytes;
}

// Address space still free under RLIMIT_AS (SIZE_MAX without a limit).
size_t address_space_left() {
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  size_t used = 0;
#if defined(__linux__)
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    unsigned long pages = 0;
    if (std::fscanf(f, "%lu", &pages) == 1) used = pages * static_cast<size_t>(sysconf(_SC_PAGE_SIZE));
    std::fclose(f);
  }
#endif
  size_t limit = static_cast<size_t>(rl.rlim_cur);
  return used < limit ? limit - used : 0;
}

}  // namespace

size_t checked_nbytes(const Shape& shape, DType dtype, const char* fn) {
  int64_t n = 1;
  bool zero = false, overflow = false;
  for (int64_t d : shape) {
    check(d >= 0, std::string(fn) + "(): negative dimension in shape " + shape_str(shape));
    if (d == 0) zero = true;
    else overflow = overflow || __builtin_mul_overflow(n, d, &n);
  }
  int64_t bytes = 0;
  if (!zero && (overflow || __builtin_mul_overflow(n, static_cast<int64_t>(itemsize(dtype)), &bytes)))
    throw ValueError(std::string(fn) + "(): shape " + shape_str(shape) + " is too large: " + dtype_name(dtype) +
                     " data of that size overflows a 64-bit byte count");
  return static_cast<size_t>(bytes);
}

void check_allocatable(size_t nbytes, const std::string& what) {
  constexpr size_t kSmall = size_t{64} << 20;  // below this, the allocator's own failure is clean enough
  if (nbytes < kSmall) return;
  size_t limit = std::min(physical_memory(), address_space_left());
  if (nbytes > limit)
    throw MemoryError(what + ": cannot allocate " + std::to_string(nbytes) + " bytes (" +
                      std::to_string(nbytes >> 20) + " MiB); this process can use at most " +
                      std::to_string(limit >> 20) + " MiB");
}

std::shared_ptr<Storage> Storage::allocate(size_t nbytes) {
  check_allocatable(nbytes, "out of memory");
  auto s = std::make_shared<Storage>();
  size_t padded = ((nbytes + 63) / 64) * 64;
  if (padded == 0) padded = 64;
  if (padded >= kLargeBuffer) {
    size_t size = (padded + kHugePage - 1) / kHugePage * kHugePage;
    void* p = LargeBufferCache::get().take(size);
    if (!p) {
      p = std::aligned_alloc(kHugePage, size);
      if (!p) {
        LargeBufferCache::get().release();
        p = std::aligned_alloc(kHugePage, size);
      }
      if (!p) throw MemoryError("out of memory: cannot allocate " + std::to_string(nbytes) + " bytes");
#if defined(MADV_HUGEPAGE)
      madvise(p, size, MADV_HUGEPAGE);  // advice only: failure changes nothing
#endif
    }
    s->data = p;
    s->nbytes = nbytes;
    s->owner = std::shared_ptr<void>(p, [size](void* q) { LargeBufferCache::get().give(q, size); });
    return s;
  }
  keep_freed_buffers_on_heap();
  // malloc + 64 bytes, aligned by hand, rather than aligned_alloc(64, ...):
  // glibc's aligned_alloc asks its heap for size + 64 + a header and gives
  // the slack back as small free fragments, which other allocations then
  // take, so the freed buffer no longer fits the next request of the same
  // size and the heap grows into fresh pages (page faults on every write:
  // a 16 MB quantize output cost 14 ms instead of 4 on its first calls).
  // A plain malloc of the same size each time reuses the freed chunk.
  void* raw = std::malloc(padded + 64);
  if (!raw) throw MemoryError("out of memory: cannot allocate " + std::to_string(nbytes) + " bytes");
  void* p = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(raw) + 63) & ~uintptr_t{63});
  s->data = p;
  s->nbytes = nbytes;
  s->owner = std::shared_ptr<void>(p, [raw](void*) { std::free(raw); });
  return s;
}

Tensor Tensor::empty_cpu(const Shape& shape, DType dtype) {
  size_t nbytes = checked_nbytes(shape, dtype, "empty");
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = dtype;
  impl->device = Device::CPU;
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->storage = Storage::allocate(nbytes);
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
