// int4 weight-only GEMV, AVX-512F: one zmm holds the 16 lanes of
// qb4w-gemv.h. Per block of 32 weights (16 bytes): one vpmovzxbd, and each
// nibble indexes a 16-float table with vpermps (which reads only an index's
// low 4 bits, so the low nibble needs no mask; the table holds float(i ^ 8)
// when the codes are flipped, so the flip costs nothing), then one FMA per
// half. That is 3 shuffle-port and 3 FMA-port operations per 32 weights;
// masking and converting (vpandd + vcvtdq2ps) measured 1.2x slower in a
// cache-resident loop.
// The groups' zero-point terms are formed 16 at a time (the products are
// per group; only their sum runs in order).
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

LUCID_ISA_BEGIN("avx512f,fma")
#include "cpu/kernels/tree16-avx512.h"
namespace lucid::kernels {

namespace {

// corr of qb4w-gemv.h for one row: fl(fl(z' * Sx) * s) per group, summed in
// order (zn null: every z' is 8).
inline float zero_point_term(size_t groups, const int32_t* zn, const float* sx, const float* sn) {
  float corr = 0.0f;
  alignas(64) float t[16];
  size_t g = 0;
  for (; g + 16 <= groups; g += 16) {
    const __m512 z = zn ? _mm512_cvtepi32_ps(_mm512_loadu_si512(zn + g)) : _mm512_set1_ps(8.0f);
    const __m512 zs = _mm512_mul_ps(z, _mm512_loadu_ps(sx + g));
    _mm512_store_ps(t, _mm512_mul_ps(zs, _mm512_loadu_ps(sn + g)));
    for (int j = 0; j < 16; ++j) corr = corr + t[j];
  }
  for (; g < groups; ++g) {
    float zs = static_cast<float>(zn ? zn[g] : 8) * sx[g];
    float term = zs * sn[g];
    corr = corr + term;
  }
  return corr;
}

}  // namespace

void f32_qb4w_gemv_avx512(LUCID_QB4W_GEMV_ARGS) {
  const size_t groups = K / G;
  const __m512 table = flip ? _mm512_setr_ps(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7)
                            : _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * (K / 2);
    const float* sn = s + n * groups;
    __m512 row = _mm512_setzero_ps();
    for (size_t g = 0; g < groups; ++g) {
      __m512 a = _mm512_setzero_ps(), c = a;
      prefetch_ahead(wn + g * G / 2, G / 2);  // the weights stream from DRAM (cpu/kernels/prefetch.h)
      for (size_t b = g * G; b < (g + 1) * G; b += 32) {
        const __m512i u = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wn + b / 2)));
        a = _mm512_fmadd_ps(_mm512_loadu_ps(xp + b), _mm512_permutexvar_ps(u, table), a);
        c = _mm512_fmadd_ps(_mm512_loadu_ps(xp + b + 16), _mm512_permutexvar_ps(_mm512_srli_epi32(u, 4), table), c);
      }
      row = _mm512_fmadd_ps(_mm512_add_ps(a, c), _mm512_set1_ps(sn[g]), row);
    }
    const float t = tree16(row) - zero_point_term(groups, zq ? zq + n * groups : nullptr, sx, sn);
    y[n] = bias ? t + bias[n] : t;
  }
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
