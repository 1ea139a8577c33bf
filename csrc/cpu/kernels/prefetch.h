// Software prefetch for the streaming kernels. On the Intel Xeon KVM guests
// these kernels are measured on, the hardware prefetchers alone leave a
// one-thread pass over a DRAM-sized input waiting on memory: quantize onto
// FP8 ran at 0.83-0.90x numpy's astype bandwidth without, 1.15-1.19x with
// (bench/float_grids.py at 16M elements). The address is formed as an integer:
// a prefetch past the end of a buffer is harmless (it never faults), pointer
// arithmetic past it would not be.
#pragma once
#include <cstdint>

namespace lucid::kernels {

constexpr uintptr_t kPrefetchAhead = 4096;  // bytes ahead of the current read

// One prefetch per 64-byte line of [p + ahead, p + ahead + bytes).
inline void prefetch_ahead(const void* p, uintptr_t bytes, uintptr_t ahead = kPrefetchAhead) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p) + ahead;
  for (uintptr_t l = 0; l < bytes; l += 64) __builtin_prefetch(reinterpret_cast<const void*>(a + l));
}

}  // namespace lucid::kernels
