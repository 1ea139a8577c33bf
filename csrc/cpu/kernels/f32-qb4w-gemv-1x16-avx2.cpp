// int4 weight-only GEMV, AVX2 + FMA: the 16 lanes of qb4w-gemv.h in two ymm
// (lanes 0-7 and 8-15) for each of A and C. Per block of 32 weights: two
// vpmovzxbd of 8 bytes, the nibbles split by a mask and a shift in int32
// lanes, four vcvtdq2ps (exact: the values are 0..15) and four FMAs.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "cpu/kernels/qb4w-gemv.h"
#include "cpu/kernels/vquant-isa.h"

LUCID_ISA_BEGIN("avx2,fma")
namespace lucid::kernels {

namespace {

template <bool Flip>
void gemv(LUCID_QB4W_GEMV_ARGS) {
  const size_t groups = K / G;
  const __m256i low = _mm256_set1_epi32(0x0f), vflip = _mm256_set1_epi32(0x88);
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * (K / 2);
    __m256 r0 = _mm256_setzero_ps(), r1 = r0;  // row lanes 0-7, 8-15
    float corr = 0.0f;
    for (size_t g = 0; g < groups; ++g) {
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, c0 = a0, c1 = a0;
      for (size_t b = g * G; b < (g + 1) * G; b += 32) {
        const uint8_t* wb = wn + b / 2;
        __m256i u = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(wb)));
        __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(wb + 8)));
        if (Flip) u = _mm256_xor_si256(u, vflip), v = _mm256_xor_si256(v, vflip);
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(xp + b), _mm256_cvtepi32_ps(_mm256_and_si256(u, low)), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(xp + b + 8), _mm256_cvtepi32_ps(_mm256_and_si256(v, low)), a1);
        c0 = _mm256_fmadd_ps(_mm256_loadu_ps(xp + b + 16), _mm256_cvtepi32_ps(_mm256_srli_epi32(u, 4)), c0);
        c1 = _mm256_fmadd_ps(_mm256_loadu_ps(xp + b + 24), _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4)), c1);
      }
      const float sg = s[n * groups + g];
      const __m256 sv = _mm256_set1_ps(sg);
      r0 = _mm256_fmadd_ps(_mm256_add_ps(a0, c0), sv, r0);
      r1 = _mm256_fmadd_ps(_mm256_add_ps(a1, c1), sv, r1);
      float zs = static_cast<float>(zq ? zq[n * groups + g] : 8) * sx[g];
      float term = zs * sg;
      corr = corr + term;
    }
    // The tree of qb4w-gemv.h: h8 = r0 + r1, then halves of 4, then of 2.
    const __m256 h8 = _mm256_add_ps(r0, r1);
    const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
    const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
    float t = _mm_cvtss_f32(_mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1)));
    t = t - corr;
    y[n] = bias ? t + bias[n] : t;
  }
}

}  // namespace

void f32_qb4w_gemv_avx2(LUCID_QB4W_GEMV_ARGS) {
  if (flip) gemv<true>(K, G, rows, xp, sx, w, s, zq, flip, bias, y);
  else gemv<false>(K, G, rows, xp, sx, w, s, zq, flip, bias, y);
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
