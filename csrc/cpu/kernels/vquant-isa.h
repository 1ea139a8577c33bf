// Internal to csrc/cpu/kernels: the per-ISA entry points the dispatch table
// (vquant-dispatch.cpp) collects, and the macros that compile one file for
// an ISA the baseline build does not assume.
#pragma once
#include "cpu/kernels/vquant.h"

// Compile the functions of a file for an x86 ISA without changing the flags
// of the rest of the build: code outside these functions (and every inline
// function from a header included before the macro) stays baseline, so no
// AVX instruction can leak into code that runs before CPUID is checked.
#define LUCID_ISA_PRAGMA(x) _Pragma(#x)
#if defined(LUCID_KERNELS_SIMDE_AVX512)
// Test builds that emulate AVX-512 with SIMDe compile everything for the host.
#define LUCID_ISA_BEGIN(isa)
#define LUCID_ISA_END
#elif defined(__clang__)
#define LUCID_ISA_BEGIN(isa) LUCID_ISA_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define LUCID_ISA_END _Pragma("clang attribute pop")
#elif defined(__GNUC__)
#define LUCID_ISA_BEGIN(isa) _Pragma("GCC push_options") LUCID_ISA_PRAGMA(GCC target(isa))
#define LUCID_ISA_END _Pragma("GCC pop_options")
#endif

// The scalar twins: plain loops the compiler must not vectorize, so that they
// stay the reference the vector kernels are held against.
#if defined(__GNUC__) && !defined(__clang__)
#define LUCID_SCALAR_ONLY __attribute__((optimize("no-tree-vectorize")))
#else
#define LUCID_SCALAR_ONLY
#endif

namespace lucid::kernels {

#define LUCID_VQUANT_DECLARE(isa)                                                                              \
  template <class Q>                                                                                           \
  void quantize_##isa(size_t rows, size_t len, const float* x, Q* q, const float* s, const int32_t* z,         \
                      unsigned flags, float lo, float hi);                                                      \
  template <class Q>                                                                                           \
  void dequantize_##isa(size_t rows, size_t len, const Q* q, float* y, const float* s, const int32_t* z,       \
                        unsigned flags);                                                                        \
  void fake_quantize_##isa(size_t rows, size_t len, const float* x, float* y, uint8_t* m, const float* s,      \
                           const int32_t* z, unsigned flags, float lo, float hi);                               \
  void mask_grad_##isa(size_t n, const uint32_t* dy, const uint8_t* m, uint32_t* dx, unsigned flags);                  \
  void pack4_##isa(size_t pairs, const uint8_t* c, uint8_t* out);                                              \
  void unpack4_##isa(size_t pairs, const uint8_t* p, uint8_t* out, bool is_signed);

#if defined(__x86_64__) || defined(_M_X64)
LUCID_VQUANT_DECLARE(avx2)
LUCID_VQUANT_DECLARE(avx512)
#endif
#if defined(__aarch64__)
LUCID_VQUANT_DECLARE(neon)
#endif

}  // namespace lucid::kernels
