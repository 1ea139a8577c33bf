// For the kernel test drivers (csrc/cpu/kernels/test, tests/kernels): whether
// the upper halves of ymm0-15 / zmm0-15 are in use (XINUSE bits 2 and 6,
// read by XGETBV with ECX = 1; false where the CPU cannot report it). A
// vector kernel must return with them clear (vzeroupper), or the SSE code its
// caller runs next pays a state-transition penalty on every instruction.
#pragma once
#if defined(__x86_64__) && defined(__GNUC__) && !defined(LUCID_KERNELS_SIMDE_AVX512)
#include <cpuid.h>
#endif

namespace lucid::kernel_checks {

inline bool avx_upper_in_use() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(LUCID_KERNELS_SIMDE_AVX512)
  unsigned a, b, c, d;
  if (!__get_cpuid_count(0xd, 1, &a, &b, &c, &d) || !(a & 4)) return false;  // no XGETBV with ECX = 1
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  return (lo & ((1u << 2) | (1u << 6))) != 0;
#else
  return false;
#endif
}

}  // namespace lucid::kernel_checks
