// int4 pack / unpack of consecutive code pairs, AVX2, 64 codes (32 bytes)
// per iteration. Pack works on 16-bit lanes (one code pair each); unpack
// splits nibbles bytewise and interleaves them back into order.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "cpu/kernels/vquant-isa.h"
#include "cpu/kernels/vquant-scalar.h"

LUCID_ISA_BEGIN("avx2")
namespace lucid::kernels {

namespace {
// 16 code pairs (uint16 lanes c0 | c1 << 8) -> 16 lanes holding c0&15 | (c1&15) << 4.
inline __m256i pair_nibbles(__m256i w) {
  return _mm256_or_si256(_mm256_and_si256(w, _mm256_set1_epi16(0x000f)),
                         _mm256_and_si256(_mm256_srli_epi16(w, 4), _mm256_set1_epi16(0x00f0)));
}
}  // namespace

void pack4_avx2(size_t pairs, const uint8_t* c, uint8_t* out) {
  size_t i = 0;
  for (; i + 32 <= pairs; i += 32) {
    __m256i a = pair_nibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + 2 * i)));
    __m256i b = pair_nibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + 2 * i + 32)));
    __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xd8);  // lanes back in order
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), p);
  }
  for (; i < pairs; ++i) out[i] = static_cast<uint8_t>((c[2 * i] & 0x0f) | ((c[2 * i + 1] & 0x0f) << 4));
}

void unpack4_avx2(size_t pairs, const uint8_t* p, uint8_t* out, bool is_signed) {
  const __m256i low = _mm256_set1_epi8(0x0f), eight = _mm256_set1_epi8(8);
  const __m256i flip = is_signed ? eight : _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 32 <= pairs; i += 32) {
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    __m256i lo = _mm256_and_si256(b, low), hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), low);
    // (n ^ 8) - 8 sign-extends a nibble; with flip = 0 it is the identity.
    lo = _mm256_sub_epi8(_mm256_xor_si256(lo, flip), flip);
    hi = _mm256_sub_epi8(_mm256_xor_si256(hi, flip), flip);
    __m256i u0 = _mm256_unpacklo_epi8(lo, hi), u1 = _mm256_unpackhi_epi8(lo, hi);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), _mm256_permute2x128_si256(u0, u1, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i + 32), _mm256_permute2x128_si256(u0, u1, 0x31));
  }
  for (; i < pairs; ++i) {
    out[2 * i] = scalar::unpack_nibble(p[i] & 0x0fu, is_signed);
    out[2 * i + 1] = scalar::unpack_nibble(p[i] >> 4, is_signed);
  }
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
