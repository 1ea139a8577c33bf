// AVX-VNNI microkernel (the VEX-encoded vpdpbusd of Alder Lake and later
// client cores, without AVX-512), 6x16 tile as two ymm halves, weights packed
// four k per column (c4). Called only when cpu_has_avxvnni() and its
// self-check passed. tests/kernels checks it against the scalar reference on
// any host that has AVX-VNNI, and on every x86-64 host under SIMDe's
// emulation of vpdpbusd (test builds with LUCID_KERNELS_SIMDE_VNNI).
#include "cpu/kernels/qgemm.h"

#if defined(__x86_64__)
#if defined(LUCID_KERNELS_SIMDE_VNNI)  // test builds only: the instruction emulated by SIMDe
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
// AVX-VNNI's VEX vpdpbusd computes what the EVEX ymm form does; SIMDe names the latter.
#define _mm256_dpbusd_avx_epi32(src, a, b) simde_mm256_dpbusd_epi32(src, a, b)
#define LUCID_AVXVNNI_TARGET
#else
#include <immintrin.h>
#define LUCID_AVXVNNI_TARGET __attribute__((target("avx2,avxvnni")))
#endif

#include <cstring>

namespace lucid::kernels {

namespace {

template <int MR>
LUCID_AVXVNNI_TARGET void tile(size_t kp, const uint8_t* a, size_t a_stride, const int8_t* w, int32_t* c) {
  __m256i lo[MR], hi[MR];
  for (int i = 0; i < MR; ++i) lo[i] = hi[i] = _mm256_setzero_si256();
  for (size_t k = 0; k < kp; k += 4) {
    __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
    __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32));
    w += 64;
    for (int i = 0; i < MR; ++i) {
      int32_t quad;
      std::memcpy(&quad, a + i * a_stride + k, sizeof quad);
      __m256i av = _mm256_set1_epi32(quad);
      lo[i] = _mm256_dpbusd_avx_epi32(lo[i], av, w0);
      hi[i] = _mm256_dpbusd_avx_epi32(hi[i], av, w1);
    }
  }
  for (int i = 0; i < MR; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * 16), lo[i]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * 16 + 8), hi[i]);
  }
}

void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride, const int8_t* w, int32_t* c) {
  const uint8_t* a = static_cast<const uint8_t*>(a_panel);
  switch (mr) {
    case 1: return tile<1>(kp, a, a_stride, w, c);
    case 2: return tile<2>(kp, a, a_stride, w, c);
    case 3: return tile<3>(kp, a, a_stride, w, c);
    case 4: return tile<4>(kp, a, a_stride, w, c);
    case 5: return tile<5>(kp, a, a_stride, w, c);
    default: return tile<6>(kp, a, a_stride, w, c);
  }
}

}  // namespace

#if defined(LUCID_KERNELS_SIMDE_VNNI)
namespace {
bool emulated() { return true; }  // SIMDe runs it on any host
}  // namespace
const QGemmKernel qgemm_6x16c4_avxvnni = {"avxvnni", "qu8-qs8-gemm-6x16c4-avxvnni", 6, 16, 4, 4, false, false,
                                          emulated, ukernel};
#else
const QGemmKernel qgemm_6x16c4_avxvnni = {"avxvnni", "qu8-qs8-gemm-6x16c4-avxvnni", 6, 16, 4, 4, false, false,
                                          cpu_has_avxvnni, ukernel};
#endif

}  // namespace lucid::kernels
#endif
