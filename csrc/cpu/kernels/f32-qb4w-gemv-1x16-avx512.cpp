// int4 weight-only GEMV, AVX-512F: 16 lanes hold two of the 8-lane parts of
// qb4w-gemv.h side by side (low nibbles of bytes 0-7 | bytes 8-15, and the
// same for the high nibbles), so one vpmovzxbd, one vcvtdq2ps, one vmulps
// and one vaddps cover 16 weights, with every lane doing exactly the scalar
// reference's operations: the two halves are added lane-wise at the end of a
// group, as the reference's (acc0 + acc1) + (acc2 + acc3). No FMA.
#if defined(__x86_64__) || defined(_M_X64)
#if defined(LUCID_KERNELS_SIMDE_AVX512)  // test builds only: AVX-512 emulated by SIMDe (scripts/check-arm64)
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include "cpu/kernels/test/simde-avx512-shims.h"
#else
#include <immintrin.h>
#endif

#include "cpu/kernels/qb4w-gemv.h"
#include "cpu/kernels/prefetch.h"
#include "cpu/kernels/vquant-isa.h"

LUCID_ISA_BEGIN("avx512f")
namespace lucid::kernels {

namespace {
template <bool Flip>
void gemv(LUCID_QB4W_GEMV_ARGS) {
  const size_t groups = K / G;
  const __m512i low = _mm512_set1_epi32(0x0f), vflip = _mm512_set1_epi32(0x88);
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * (K / 2);
    __m256 row = _mm256_setzero_ps();
    float corr = 0.0f;
    for (size_t g = 0; g < groups; ++g) {
      __m512 lo_acc = _mm512_setzero_ps(), hi_acc = lo_acc;  // [acc0 | acc2], [acc1 | acc3]
      prefetch_ahead(wn + g * G / 2, G / 2);  // the weights stream from DRAM (cpu/kernels/prefetch.h)
      for (size_t b = g * G; b < (g + 1) * G; b += 32) {
        __m512i u = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wn + b / 2)));
        if (Flip) u = _mm512_xor_si512(u, vflip);
        lo_acc = _mm512_add_ps(lo_acc, _mm512_mul_ps(_mm512_loadu_ps(xp + b), _mm512_cvtepi32_ps(_mm512_and_si512(u, low))));
        hi_acc = _mm512_add_ps(hi_acc, _mm512_mul_ps(_mm512_loadu_ps(xp + b + 16), _mm512_cvtepi32_ps(_mm512_srli_epi32(u, 4))));
      }
      __m512 c = _mm512_add_ps(lo_acc, hi_acc);  // [acc0 + acc1 | acc2 + acc3]
      __m256 c_lo = _mm512_castps512_ps256(c);
      __m256 c_hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(c), 1));
      const float sg = s[n * groups + g];
      row = _mm256_add_ps(row, _mm256_mul_ps(_mm256_add_ps(c_lo, c_hi), _mm256_set1_ps(sg)));
      float zs = static_cast<float>(zq[n * groups + g]) * sx[g];
      float term = zs * sg;
      corr = corr + term;
    }
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(row), _mm256_extractf128_ps(row, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    float t = _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
    t = t - corr;
    y[n] = bias ? t + bias[n] : t;
  }
}
}  // namespace

void f32_qb4w_gemv_avx512(LUCID_QB4W_GEMV_ARGS) {
  if (flip) gemv<true>(K, G, rows, xp, sx, w, s, zq, flip, bias, y);
  else gemv<false>(K, G, rows, xp, sx, w, s, zq, flip, bias, y);
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
