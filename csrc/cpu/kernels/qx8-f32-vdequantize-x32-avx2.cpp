// dequantize int8 / uint8 -> f32, AVX2, 32 elements per iteration:
// widen to int32, subtract z in int32 (exact), cvtdq2ps (nearest-even),
// mulps by s. One rounding per step, as in the scalar reference.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "cpu/kernels/vquant-isa.h"
#include "cpu/kernels/vquant-scalar.h"

LUCID_ISA_BEGIN("avx2")
namespace lucid::kernels {

namespace {

template <class Q>
inline __m256i widen8(const Q* q) {
  __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q));
  return std::is_signed_v<Q> ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

// Elements before p reaches a 32-byte boundary (streamed stores need one);
// lucid's buffers are T-aligned, so the byte gap is a multiple of sizeof(T).
template <class T>
inline size_t to_aligned(const T* p, size_t len) {
  size_t gap = (32 - (reinterpret_cast<uintptr_t>(p) & 31)) & 31;
  return gap / sizeof(T) < len ? gap / sizeof(T) : len;
}

template <class Q, bool PerElem, bool Stream>
void dequantize_rows(size_t rows, size_t len, const Q* q, float* y, const float* s, const int32_t* z) {
  for (size_t r = 0; r < rows; ++r, q += len, y += len) {
    __m256 vs = _mm256_set1_ps(s[r]);
    __m256i vz = _mm256_set1_epi32(z[r]);
    size_t j = 0;
    if (Stream)
      for (size_t e = to_aligned(y, len); j < e; ++j) {
        size_t p = PerElem ? j : r;
        y[j] = scalar::dequantize_one(q[j], s[p], z[p]);
      }
    for (; j + 32 <= len; j += 32) {
      for (int k = 0; k < 4; ++k) {
        if (PerElem) {
          vs = _mm256_loadu_ps(s + j + 8 * k);
          vz = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(z + j + 8 * k));
        }
        __m256 d = _mm256_cvtepi32_ps(_mm256_sub_epi32(widen8(q + j + 8 * k), vz));
        if (Stream) _mm256_stream_ps(y + j + 8 * k, _mm256_mul_ps(d, vs));
        else _mm256_storeu_ps(y + j + 8 * k, _mm256_mul_ps(d, vs));
      }
    }
    for (; j < len; ++j) {
      size_t p = PerElem ? j : r;
      y[j] = scalar::dequantize_one(q[j], s[p], z[p]);
    }
  }
  if (Stream) _mm_sfence();
}

}  // namespace

template <class Q>
void dequantize_avx2(size_t rows, size_t len, const Q* q, float* y, const float* s, const int32_t* z, unsigned flags) {
  switch (flags & (kPerElem | kStream)) {
    case 0: return dequantize_rows<Q, false, false>(rows, len, q, y, s, z);
    case kPerElem: return dequantize_rows<Q, true, false>(rows, len, q, y, s, z);
    case kStream: return dequantize_rows<Q, false, true>(rows, len, q, y, s, z);
    default: return dequantize_rows<Q, true, true>(rows, len, q, y, s, z);
  }
}

template void dequantize_avx2<int8_t>(size_t, size_t, const int8_t*, float*, const float*, const int32_t*, unsigned);
template void dequantize_avx2<uint8_t>(size_t, size_t, const uint8_t*, float*, const float*, const int32_t*, unsigned);

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
