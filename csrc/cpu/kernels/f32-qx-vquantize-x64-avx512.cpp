// quantize f32 -> int8 / uint8 / int32, AVX-512F, 64 elements per iteration.
// The AVX2 kernel's sequence on 16 lanes: vdivps, vrndscaleps to nearest-even,
// vaddps, vmaxps / vminps with the bound first (NaN stays NaN), NaN lanes
// take the integer z; vpmovdb narrows (codes are already in range).
#if defined(__x86_64__) || defined(_M_X64)
#if defined(LUCID_KERNELS_SIMDE_AVX512)  // test builds only: AVX-512 emulated by SIMDe (scripts/check-arm64)
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include "cpu/kernels/test/simde-avx512-shims.h"
#else
#include <immintrin.h>
#endif

#include "cpu/kernels/prefetch.h"
#include "cpu/kernels/vquant-isa.h"
#include "cpu/kernels/vquant-scalar.h"

LUCID_ISA_BEGIN("avx512f")
namespace lucid::kernels {

namespace {

inline __m512i code16(__m512 x, __m512 s, __m512 zf, __m512i z, __m512 lo, __m512 hi) {
  __m512 t = _mm512_div_ps(x, s);
  __m512 r = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 v = _mm512_add_ps(r, zf);
  __m512 c = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
  __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_blend_epi32(nan, _mm512_cvttps_epi32(c), z);
}

template <class Q>
inline void store16(Q* q, __m512i c) {
  if constexpr (sizeof(Q) == 4) _mm512_storeu_si512(q, c);
  else _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(c));
}

template <class Q, bool PerElem>
void quantize_rows(size_t rows, size_t len, const float* x, Q* q, const float* s, const int32_t* z, float lo,
                   float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (size_t r = 0; r < rows; ++r, x += len, q += len) {
    __m512 vs = _mm512_set1_ps(s[r]), vzf = _mm512_set1_ps(static_cast<float>(z[r]));
    __m512i vz = _mm512_set1_epi32(z[r]);
    size_t j = 0;
    for (; j + 64 <= len; j += 64) {
      prefetch_ahead(x + j, 256);
      for (int k = 0; k < 4; ++k) {
        if (PerElem) {
          vs = _mm512_loadu_ps(s + j + 16 * k);
          vz = _mm512_loadu_si512(z + j + 16 * k);
          vzf = _mm512_cvtepi32_ps(vz);
        }
        store16(q + j + 16 * k, code16(_mm512_loadu_ps(x + j + 16 * k), vs, vzf, vz, vlo, vhi));
      }
    }
    for (; j < len; ++j) {
      size_t p = PerElem ? j : r;
      q[j] = static_cast<Q>(scalar::quantize_one(x[j], s[p], z[p], lo, hi));
    }
  }
}

}  // namespace

template <class Q>
void quantize_avx512(size_t rows, size_t len, const float* x, Q* q, const float* s, const int32_t* z,
                     unsigned flags, float lo, float hi) {
  if (flags & kPerElem) quantize_rows<Q, true>(rows, len, x, q, s, z, lo, hi);
  else quantize_rows<Q, false>(rows, len, x, q, s, z, lo, hi);
}

template void quantize_avx512<int8_t>(size_t, size_t, const float*, int8_t*, const float*, const int32_t*, unsigned, float, float);
template void quantize_avx512<uint8_t>(size_t, size_t, const float*, uint8_t*, const float*, const int32_t*, unsigned, float, float);
template void quantize_avx512<int32_t>(size_t, size_t, const float*, int32_t*, const float*, const int32_t*, unsigned, float, float);

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
