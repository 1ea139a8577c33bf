// fake_quantize f32 forward (y and the STE mask in one pass) and backward
// (dx = mask ? dy : +0), AVX2, 32 elements per iteration. Same operation
// sequence as quantize then dequantize; NaN lanes are replaced by the
// canonical NaN with a blend (never by OR-ing bits).
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <cstdint>

#include "cpu/kernels/vquant-isa.h"
#include "cpu/kernels/vquant-scalar.h"

LUCID_ISA_BEGIN("avx2")
namespace lucid::kernels {

namespace {

// y for 8 lanes; `pass` gets all-ones where lo <= v <= hi (ordered compares:
// NaN fails).
inline __m256 fq8(__m256 x, __m256 s, __m256 zf, __m256i z, __m256 lo, __m256 hi, __m256& pass) {
  __m256 t = _mm256_div_ps(x, s);
  __m256 r = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 v = _mm256_add_ps(r, zf);
  pass = _mm256_and_ps(_mm256_cmp_ps(v, lo, _CMP_GE_OQ), _mm256_cmp_ps(v, hi, _CMP_LE_OQ));
  __m256 c = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
  __m256 y = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvttps_epi32(c), z)), s);
  __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  return _mm256_blendv_ps(y, _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(scalar::kCanonicalNaN))), nan);
}

// Elements before p reaches a 32-byte boundary (streamed stores need one);
// lucid's buffers are T-aligned, so the byte gap is a multiple of sizeof(T).
template <class T>
inline size_t to_aligned(const T* p, size_t len) {
  size_t gap = (32 - (reinterpret_cast<uintptr_t>(p) & 31)) & 31;
  return gap / sizeof(T) < len ? gap / sizeof(T) : len;
}

template <bool PerElem, bool Stream>
void fq_rows(size_t rows, size_t len, const float* x, float* y, uint8_t* m, const float* s, const int32_t* z,
             float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (size_t r = 0; r < rows; ++r, x += len, y += len, m += len) {
    __m256 vs = _mm256_set1_ps(s[r]), vzf = _mm256_set1_ps(static_cast<float>(z[r]));
    __m256i vz = _mm256_set1_epi32(z[r]);
    size_t j = 0;
    if (Stream)
      for (size_t e = to_aligned(y, len); j < e; ++j) {
        size_t p = PerElem ? j : r;
        y[j] = scalar::fake_quantize_one(x[j], s[p], z[p], lo, hi, m[j]);
      }
    for (; j + 32 <= len; j += 32) {
      __m256i pass[4];
      for (int k = 0; k < 4; ++k) {
        if (PerElem) {
          vs = _mm256_loadu_ps(s + j + 8 * k);
          vz = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(z + j + 8 * k));
          vzf = _mm256_cvtepi32_ps(vz);
        }
        __m256 pk;
        __m256 yv = fq8(_mm256_loadu_ps(x + j + 8 * k), vs, vzf, vz, vlo, vhi, pk);
        if (Stream) _mm256_stream_ps(y + j + 8 * k, yv);
        else _mm256_storeu_ps(y + j + 8 * k, yv);
        pass[k] = _mm256_castps_si256(pk);
      }
      // all-ones / zero int32 lanes -> 0xff / 0 bytes in order -> 1 / 0.
      __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(pass[0], pass[1]), _mm256_packs_epi32(pass[2], pass[3]));
      b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(m + j), _mm256_and_si256(b, _mm256_set1_epi8(1)));
    }
    for (; j < len; ++j) {
      size_t p = PerElem ? j : r;
      y[j] = scalar::fake_quantize_one(x[j], s[p], z[p], lo, hi, m[j]);
    }
  }
  if (Stream) _mm_sfence();
}

}  // namespace

void fake_quantize_avx2(size_t rows, size_t len, const float* x, float* y, uint8_t* m, const float* s,
                        const int32_t* z, unsigned flags, float lo, float hi) {
  switch (flags & (kPerElem | kStream)) {
    case 0: return fq_rows<false, false>(rows, len, x, y, m, s, z, lo, hi);
    case kPerElem: return fq_rows<true, false>(rows, len, x, y, m, s, z, lo, hi);
    case kStream: return fq_rows<false, true>(rows, len, x, y, m, s, z, lo, hi);
    default: return fq_rows<true, true>(rows, len, x, y, m, s, z, lo, hi);
  }
}

void mask_grad_avx2(size_t n, const uint32_t* dy, const uint8_t* m, uint32_t* dx, unsigned flags) {
  const __m256i one = _mm256_set1_epi32(1);
  const bool stream = flags & kStream;
  size_t i = 0;
  if (stream)
    for (size_t e = to_aligned(dx, n); i < e; ++i) dx[i] = (m[i] & 1u) ? dy[i] : 0u;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) {
      __m256i mk = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(m + i + 8 * k)));
      __m256i keep = _mm256_cmpeq_epi32(_mm256_and_si256(mk, one), one);
      __m256i g = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(dy + i + 8 * k));
      __m256i out = _mm256_and_si256(g, keep);
      if (stream) _mm256_stream_si256(reinterpret_cast<__m256i*>(dx + i + 8 * k), out);
      else _mm256_storeu_si256(reinterpret_cast<__m256i*>(dx + i + 8 * k), out);
    }
  for (; i < n; ++i) dx[i] = (m[i] & 1u) ? dy[i] : 0u;
  if (stream) _mm_sfence();
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
