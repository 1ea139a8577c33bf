// int4 weight-only GEMV, AVX2: one output at a time; per 8 packed bytes
// (16 weights) one vpmovzxbd, the two nibbles split in int32 lanes, two
// cvtdq2ps (exact), two mulps and two addps, never an FMA, in the order of
// qb4w-gemv.h. The zero point is folded into one correction per group.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "cpu/kernels/qb4w-gemv.h"
#include "cpu/kernels/vquant-isa.h"

LUCID_ISA_BEGIN("avx2")
namespace lucid::kernels {

namespace {
template <bool Flip>
void gemv(LUCID_QB4W_GEMV_ARGS) {
  const size_t groups = K / G;
  const __m256i low = _mm256_set1_epi32(0x0f), vflip = _mm256_set1_epi32(0x88);
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * (K / 2);
    __m256 row = _mm256_setzero_ps();
    float corr = 0.0f;
    for (size_t g = 0; g < groups; ++g) {
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (size_t b = g * G; b < (g + 1) * G; b += 32) {
        const uint8_t* wb = wn + b / 2;
        __m256i u = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(wb)));
        __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(wb + 8)));
        if (Flip) u = _mm256_xor_si256(u, vflip), v = _mm256_xor_si256(v, vflip);
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_loadu_ps(xp + b), _mm256_cvtepi32_ps(_mm256_and_si256(u, low))));
        a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_loadu_ps(xp + b + 16), _mm256_cvtepi32_ps(_mm256_srli_epi32(u, 4))));
        a2 = _mm256_add_ps(a2, _mm256_mul_ps(_mm256_loadu_ps(xp + b + 8), _mm256_cvtepi32_ps(_mm256_and_si256(v, low))));
        a3 = _mm256_add_ps(a3, _mm256_mul_ps(_mm256_loadu_ps(xp + b + 24), _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4))));
      }
      const float sg = s[n * groups + g];
      __m256 gsum = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
      row = _mm256_add_ps(row, _mm256_mul_ps(gsum, _mm256_set1_ps(sg)));
      float zs = static_cast<float>(zq[n * groups + g]) * sx[g];
      float term = zs * sg;
      corr = corr + term;
    }
    // (r0+r4, r1+r5, r2+r6, r3+r7) -> ((r0+r4)+(r2+r6), (r1+r5)+(r3+r7)) -> sum.
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(row), _mm256_extractf128_ps(row, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    float t = _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
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
