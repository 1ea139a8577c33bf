// The 16-lane sum both GEMV families fix (qb4w-gemv.h, qfw-gemv.h):
// h8[l] = r[l] + r[l + 8], h4[l] = h8[l] + h8[l + 4], h2[l] = h4[l] + h4[l + 2],
// then h2[0] + h2[1]. Include it after LUCID_ISA_BEGIN (an AVX-512 region)
// and after the intrinsics header; its function has internal linkage, so each
// kernel file keeps its own copy compiled for its own target.
#pragma once

namespace lucid::kernels {
namespace {

inline float tree16(__m512 r) {
  const __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(r),
                                  _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(r), 1)));
  const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  return _mm_cvtss_f32(_mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1)));
}

}  // namespace
}  // namespace lucid::kernels
