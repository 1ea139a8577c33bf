// dequantize int8 / uint8 -> f32, AVX-512F, 64 elements per iteration:
// vpmovsxbd / vpmovzxbd, vpsubd (exact), vcvtdq2ps, vmulps.
#if defined(__x86_64__) || defined(_M_X64)
#if defined(LUCID_KERNELS_SIMDE_AVX512)  // test builds only: AVX-512 emulated by SIMDe (scripts/check-arm64)
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include "cpu/kernels/test/simde-avx512-shims.h"
#else
#include <immintrin.h>
#endif

#include <type_traits>

#include "cpu/kernels/vquant-isa.h"
#include "cpu/kernels/vquant-scalar.h"

LUCID_ISA_BEGIN("avx512f")
namespace lucid::kernels {

namespace {

template <class Q>
inline __m512i widen16(const Q* q) {
  __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  return std::is_signed_v<Q> ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
}

template <class Q, bool PerElem>
void dequantize_rows(size_t rows, size_t len, const Q* q, float* y, const float* s, const int32_t* z) {
  for (size_t r = 0; r < rows; ++r, q += len, y += len) {
    __m512 vs = _mm512_set1_ps(s[r]);
    __m512i vz = _mm512_set1_epi32(z[r]);
    size_t j = 0;
    for (; j + 64 <= len; j += 64)
      for (int k = 0; k < 4; ++k) {
        if (PerElem) {
          vs = _mm512_loadu_ps(s + j + 16 * k);
          vz = _mm512_loadu_si512(z + j + 16 * k);
        }
        __m512 d = _mm512_cvtepi32_ps(_mm512_sub_epi32(widen16(q + j + 16 * k), vz));
        _mm512_storeu_ps(y + j + 16 * k, _mm512_mul_ps(d, vs));
      }
    for (; j < len; ++j) {
      size_t p = PerElem ? j : r;
      y[j] = scalar::dequantize_one(q[j], s[p], z[p]);
    }
  }
}

}  // namespace

template <class Q>
void dequantize_avx512(size_t rows, size_t len, const Q* q, float* y, const float* s, const int32_t* z,
                       unsigned flags) {
  if (flags & kPerElem) dequantize_rows<Q, true>(rows, len, q, y, s, z);
  else dequantize_rows<Q, false>(rows, len, q, y, s, z);
}

template void dequantize_avx512<int8_t>(size_t, size_t, const int8_t*, float*, const float*, const int32_t*, unsigned);
template void dequantize_avx512<uint8_t>(size_t, size_t, const uint8_t*, float*, const float*, const int32_t*, unsigned);

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
