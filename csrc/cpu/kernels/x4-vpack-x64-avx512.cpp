// int4 pack / unpack of consecutive code pairs, AVX-512BW, 64 codes per
// iteration: pairs as 16-bit lanes, narrowed (vpmovwb) or widened
// (vpmovzxbw) in order, so no lane shuffles are needed.
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

LUCID_ISA_BEGIN("avx512f,avx512bw")
namespace lucid::kernels {

void pack4_avx512(size_t pairs, const uint8_t* c, uint8_t* out) {
  size_t i = 0;
  for (; i + 32 <= pairs; i += 32) {
    __m512i w = _mm512_loadu_si512(c + 2 * i);
    __m512i p = _mm512_or_si512(_mm512_and_si512(w, _mm512_set1_epi16(0x000f)),
                                _mm512_and_si512(_mm512_srli_epi16(w, 4), _mm512_set1_epi16(0x00f0)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi16_epi8(p));
  }
  for (; i < pairs; ++i) out[i] = static_cast<uint8_t>((c[2 * i] & 0x0f) | ((c[2 * i + 1] & 0x0f) << 4));
}

void unpack4_avx512(size_t pairs, const uint8_t* p, uint8_t* out, bool is_signed) {
  const __m512i flip = _mm512_set1_epi8(is_signed ? 8 : 0);
  size_t i = 0;
  for (; i + 32 <= pairs; i += 32) {
    __m512i b = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    // lane = lo | hi << 8: byte 2i is the low nibble, byte 2i+1 the high one.
    __m512i w = _mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi16(0x000f)),
                                _mm512_and_si512(_mm512_slli_epi16(b, 4), _mm512_set1_epi16(0x0f00)));
    w = _mm512_sub_epi8(_mm512_xor_si512(w, flip), flip);  // (n ^ 8) - 8 per byte when signed
    _mm512_storeu_si512(out + 2 * i, w);
  }
  for (; i < pairs; ++i) {
    out[2 * i] = scalar::unpack_nibble(p[i] & 0x0fu, is_signed);
    out[2 * i + 1] = scalar::unpack_nibble(p[i] >> 4, is_signed);
  }
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
