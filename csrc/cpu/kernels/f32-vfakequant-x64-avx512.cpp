// fake_quantize f32 forward (y + STE mask) and backward, AVX-512F, 64
// elements per iteration; the AVX2 kernel's sequence with mask registers.
#if defined(__x86_64__) || defined(_M_X64)
#if defined(LUCID_KERNELS_SIMDE_AVX512)  // test builds only: AVX-512 emulated by SIMDe (scripts/check-arm64)
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include "cpu/kernels/test/simde-avx512-shims.h"
#else
#include <immintrin.h>
#endif

#include "cpu/kernels/vquant-isa.h"
#include "cpu/kernels/vquant-scalar.h"

LUCID_ISA_BEGIN("avx512f")
namespace lucid::kernels {

namespace {

template <bool PerElem>
void fq_rows(size_t rows, size_t len, const float* x, float* y, uint8_t* m, const float* s, const int32_t* z,
             float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const __m512 qnan = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(scalar::kCanonicalNaN)));
  for (size_t r = 0; r < rows; ++r, x += len, y += len, m += len) {
    __m512 vs = _mm512_set1_ps(s[r]), vzf = _mm512_set1_ps(static_cast<float>(z[r]));
    __m512i vz = _mm512_set1_epi32(z[r]);
    size_t j = 0;
    for (; j + 64 <= len; j += 64)
      for (int k = 0; k < 4; ++k) {
        size_t o = j + 16 * k;
        if (PerElem) {
          vs = _mm512_loadu_ps(s + o);
          vz = _mm512_loadu_si512(z + o);
          vzf = _mm512_cvtepi32_ps(vz);
        }
        __m512 xv = _mm512_loadu_ps(x + o);
        __m512 t = _mm512_div_ps(xv, vs);
        __m512 v = _mm512_add_ps(_mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vzf);
        __mmask16 pass = _mm512_cmp_ps_mask(v, vlo, _CMP_GE_OQ) & _mm512_cmp_ps_mask(v, vhi, _CMP_LE_OQ);
        __m512 c = _mm512_min_ps(vhi, _mm512_max_ps(vlo, v));
        __m512 yv = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvttps_epi32(c), vz)), vs);
        yv = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(xv, xv, _CMP_UNORD_Q), yv, qnan);
        _mm512_storeu_ps(y + o, yv);
        __m128i mb = _mm512_cvtepi32_epi8(_mm512_maskz_set1_epi32(pass, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(m + o), mb);
      }
    for (; j < len; ++j) {
      size_t p = PerElem ? j : r;
      y[j] = scalar::fake_quantize_one(x[j], s[p], z[p], lo, hi, m[j]);
    }
  }
}

}  // namespace

void fake_quantize_avx512(size_t rows, size_t len, const float* x, float* y, uint8_t* m, const float* s,
                          const int32_t* z, unsigned flags, float lo, float hi) {
  if (flags & kPerElem) fq_rows<true>(rows, len, x, y, m, s, z, lo, hi);
  else fq_rows<false>(rows, len, x, y, m, s, z, lo, hi);
}

void mask_grad_avx512(size_t n, const uint32_t* dy, const uint8_t* m, uint32_t* dx, unsigned) {
  const __m512i one = _mm512_set1_epi32(1);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i mk = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m + i)));
    __mmask16 keep = _mm512_test_epi32_mask(mk, one);
    _mm512_storeu_si512(dx + i, _mm512_maskz_loadu_epi32(keep, dy + i));
  }
  for (; i < n; ++i) dx[i] = (m[i] & 1u) ? dy[i] : 0u;
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
