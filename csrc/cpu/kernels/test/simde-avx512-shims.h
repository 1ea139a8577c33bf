// Test builds only (LUCID_KERNELS_SIMDE_AVX512, scripts/check-arm64
// --avx512-simde): the AVX-512 intrinsics the kernels use that SIMDe 0.7
// does not provide, written lane by lane with the instructions' documented
// semantics, so the AVX-512 kernels run (emulated) on CPUs without AVX-512.
#pragma once
#include <cmath>
#include <cstdint>

namespace lucid_simde_shims {

inline simde__m512i cvttps_epi32(simde__m512 a) {  // vcvttps2dq: NaN / out of range -> INT32_MIN
  simde__m512_private x = simde__m512_to_private(a);
  simde__m512i_private r;
  for (int i = 0; i < 16; ++i) {
    float v = x.f32[i];
    r.i32[i] = (v != v || v >= 2147483648.0f || v < -2147483648.0f) ? INT32_MIN : static_cast<int32_t>(v);
  }
  return simde__m512i_from_private(r);
}
inline simde__m512 cvtepi32_ps(simde__m512i a) {  // vcvtdq2ps: round to nearest even
  simde__m512i_private x = simde__m512i_to_private(a);
  simde__m512_private r;
  for (int i = 0; i < 16; ++i) r.f32[i] = static_cast<float>(x.i32[i]);
  return simde__m512_from_private(r);
}
inline simde__m128i cvtepi32_epi8(simde__m512i a) {  // vpmovdb: truncate
  simde__m512i_private x = simde__m512i_to_private(a);
  simde__m128i_private r;
  for (int i = 0; i < 16; ++i) r.i8[i] = static_cast<int8_t>(x.i32[i]);
  return simde__m128i_from_private(r);
}
template <class Src>
inline simde__m512i widen_bytes_to_epi32(simde__m128i a) {
  simde__m128i_private x = simde__m128i_to_private(a);
  simde__m512i_private r;
  for (int i = 0; i < 16; ++i) r.i32[i] = static_cast<Src>(x.u8[i]);
  return simde__m512i_from_private(r);
}
inline simde__m512i cvtepu8_epi16(simde__m256i a) {
  simde__m256i_private x = simde__m256i_to_private(a);
  simde__m512i_private r;
  for (int i = 0; i < 32; ++i) r.i16[i] = static_cast<int16_t>(x.u8[i]);
  return simde__m512i_from_private(r);
}
inline simde__m512i maskz_loadu_epi32(simde__mmask16 k, const void* p) {
  const int32_t* s = static_cast<const int32_t*>(p);
  simde__m512i_private r;
  for (int i = 0; i < 16; ++i) r.i32[i] = (k >> i) & 1 ? s[i] : 0;
  return simde__m512i_from_private(r);
}

}  // namespace lucid_simde_shims

#define _mm512_cvttps_epi32(a) lucid_simde_shims::cvttps_epi32(a)
#define _mm512_cvtepi32_ps(a) lucid_simde_shims::cvtepi32_ps(a)
#define _mm512_cvtepi32_epi8(a) lucid_simde_shims::cvtepi32_epi8(a)
#define _mm512_cvtepi8_epi32(a) lucid_simde_shims::widen_bytes_to_epi32<int8_t>(a)
#define _mm512_cvtepu8_epi32(a) lucid_simde_shims::widen_bytes_to_epi32<uint8_t>(a)
#define _mm512_cvtepu8_epi16(a) lucid_simde_shims::cvtepu8_epi16(a)
#define _mm512_maskz_loadu_epi32(k, p) lucid_simde_shims::maskz_loadu_epi32(k, p)
