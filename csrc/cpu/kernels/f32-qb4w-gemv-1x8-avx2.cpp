// int4 weight-only GEMV, AVX2: one output at a time, 32 weights (16 bytes)
// per block as four 8-lane vectors; nibbles are widened in registers
// (vpmovzxbd), z' subtracted in int32 (exact), converted (exact: |q - z| <= 23),
// multiplied and added as separate roundings (no FMA), in the order of
// qb4w-gemv.h. Bound by the packed weights' memory traffic for one row.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "cpu/kernels/qb4w-gemv.h"
#include "cpu/kernels/vquant-isa.h"

LUCID_ISA_BEGIN("avx2")
namespace lucid::kernels {

namespace {
inline __m256 term(__m128i bytes8, __m256i z, const float* x) {
  __m256 d = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepu8_epi32(bytes8), z));
  return _mm256_mul_ps(_mm256_loadu_ps(x), d);
}
}  // namespace

void f32_qb4w_gemv_avx2(size_t K, size_t G, size_t rows, const float* xp, const uint8_t* w, const float* s,
                        const int32_t* zq, uint8_t flip, const float* bias, float* y) {
  const size_t groups = K / G;
  const __m128i vflip = _mm_set1_epi8(static_cast<char>(flip)), low = _mm_set1_epi8(0x0f);
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * (K / 2);
    __m256 row = _mm256_setzero_ps();
    for (size_t g = 0; g < groups; ++g) {
      const __m256i z = _mm256_set1_epi32(zq[n * groups + g]);
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (size_t b = g * G; b < (g + 1) * G; b += 32) {
        __m128i bytes = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wn + b / 2)), vflip);
        __m128i lo = _mm_and_si128(bytes, low), hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low);
        a0 = _mm256_add_ps(a0, term(lo, z, xp + b));
        a1 = _mm256_add_ps(a1, term(_mm_unpackhi_epi64(lo, lo), z, xp + b + 8));
        a2 = _mm256_add_ps(a2, term(hi, z, xp + b + 16));
        a3 = _mm256_add_ps(a3, term(_mm_unpackhi_epi64(hi, hi), z, xp + b + 24));
      }
      __m256 gsum = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
      row = _mm256_add_ps(row, _mm256_mul_ps(gsum, _mm256_set1_ps(s[n * groups + g])));
    }
    // (r0+r4, r1+r5, r2+r6, r3+r7) -> ((r0+r4)+(r2+r6), (r1+r5)+(r3+r7)) -> sum.
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(row), _mm256_extractf128_ps(row, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    float t = _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
    y[n] = bias ? t + bias[n] : t;
  }
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
