// AVX-512 VNNI microkernel, 8x16 tile, weights packed four k per column (c4):
// one zmm holds 16 columns x 4 k, and vpdpbusd adds the four u8*s8 products
// of each lane (at most 4*255*128, no saturation) into int32. Compiled with a
// target attribute and called only when cpu_has_avx512vnni() (CPUID + XCR0)
// and its self-check passed. Its equality with the scalar reference is
// asserted by tests/kernels on any host that has it, and on every x86-64 host
// under SIMDe's emulation (test builds with LUCID_KERNELS_SIMDE_VNNI).
#include "cpu/kernels/qgemm.h"

#if defined(__x86_64__)
#if defined(LUCID_KERNELS_SIMDE_VNNI)  // test builds only: AVX-512 emulated by SIMDe
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#define LUCID_AVX512VNNI_TARGET
#else
#include <immintrin.h>
#define LUCID_AVX512VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))
#endif

#include <cstring>

namespace lucid::kernels {

namespace {

template <int MR>
LUCID_AVX512VNNI_TARGET void tile(size_t kp, const uint8_t* a, size_t a_stride, const int8_t* w, int32_t* c) {
  __m512i acc[MR];
  for (int i = 0; i < MR; ++i) acc[i] = _mm512_setzero_si512();
  for (size_t k = 0; k < kp; k += 4) {
    __m512i wv = _mm512_loadu_si512(w);
    w += 64;
    for (int i = 0; i < MR; ++i) {
      int32_t quad;
      std::memcpy(&quad, a + i * a_stride + k, sizeof quad);
      acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_set1_epi32(quad), wv);
    }
  }
  for (int i = 0; i < MR; ++i) _mm512_storeu_si512(c + i * 16, acc[i]);
}

void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride, const int8_t* w, int32_t* c) {
  const uint8_t* a = static_cast<const uint8_t*>(a_panel);
  switch (mr) {
    case 1: return tile<1>(kp, a, a_stride, w, c);
    case 2: return tile<2>(kp, a, a_stride, w, c);
    case 3: return tile<3>(kp, a, a_stride, w, c);
    case 4: return tile<4>(kp, a, a_stride, w, c);
    default: return tile<8>(kp, a, a_stride, w, c);  // rows past mr are zero padding
  }
}

}  // namespace

#if defined(LUCID_KERNELS_SIMDE_VNNI)
namespace {
bool emulated() { return true; }  // SIMDe runs it on any host
}  // namespace
const QGemmKernel qgemm_8x16c4_avx512vnni = {"avx512vnni", "qu8-qs8-gemm-8x16c4-avx512vnni", 8, 16, 4, 4, false, false,
                                             emulated, ukernel};
#else
const QGemmKernel qgemm_8x16c4_avx512vnni = {"avx512vnni", "qu8-qs8-gemm-8x16c4-avx512vnni", 8, 16, 4, 4, false, false,
                                             cpu_has_avx512vnni, ukernel};
#endif

}  // namespace lucid::kernels
#endif
