// The per-ISA tables of the quantization family and the run-time choice
// among them. A table is only ever chosen when CPUID (and, for AVX-512, the
// OS's saved register state, which __builtin_cpu_supports checks) says the
// CPU can run it; the AVX-512 kernels are compiled into every x86-64 build.
#include <cstring>
#include <initializer_list>

#include "cpu/kernels/vquant-isa.h"

namespace lucid::kernels {

#if defined(__x86_64__) || defined(_M_X64)
const VQuantKernels* vquant_avx2() {
  static const VQuantKernels k{"avx2",           quantize_avx2<int8_t>,   quantize_avx2<uint8_t>,
                               quantize_avx2<int32_t>, dequantize_avx2<int8_t>, dequantize_avx2<uint8_t>,
                               fake_quantize_avx2, mask_grad_avx2,          pack4_avx2,
                               unpack4_avx2};
  return &k;
}
const VQuantKernels* vquant_avx512() {
  static const VQuantKernels k{"avx512",           quantize_avx512<int8_t>,   quantize_avx512<uint8_t>,
                               quantize_avx512<int32_t>, dequantize_avx512<int8_t>, dequantize_avx512<uint8_t>,
                               fake_quantize_avx512, mask_grad_avx512,          pack4_avx512,
                               unpack4_avx512};
  return &k;
}
#else
const VQuantKernels* vquant_avx2() { return nullptr; }
const VQuantKernels* vquant_avx512() { return nullptr; }
#endif

#if defined(__aarch64__)
const VQuantKernels* vquant_neon() {
  static const VQuantKernels k{"neon",           quantize_neon<int8_t>,   quantize_neon<uint8_t>,
                               quantize_neon<int32_t>, dequantize_neon<int8_t>, dequantize_neon<uint8_t>,
                               fake_quantize_neon, mask_grad_neon,          pack4_neon,
                               unpack4_neon};
  return &k;
}
#else
const VQuantKernels* vquant_neon() { return nullptr; }
#endif

bool isa_supported(const char* isa) {
  if (std::strcmp(isa, "scalar") == 0) return true;
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
  if (std::strcmp(isa, "avx2") == 0) return __builtin_cpu_supports("avx2");
#if defined(LUCID_KERNELS_SIMDE_AVX512)
  if (std::strcmp(isa, "avx512") == 0) return true;  // emulated (test builds only)
#else
  if (std::strcmp(isa, "avx512") == 0) return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#endif
#endif
#if defined(__aarch64__)
  if (std::strcmp(isa, "neon") == 0) return true;  // Advanced SIMD is part of every AArch64 CPU
#endif
  return false;
}

const VQuantKernels& vquant_best() {
  static const VQuantKernels* best = [] {
    for (const VQuantKernels* k : {vquant_avx512(), vquant_avx2(), vquant_neon()})
      if (k && isa_supported(k->isa)) return k;
    return &vquant_scalar();
  }();
  return *best;
}

}  // namespace lucid::kernels
