// AVX2 microkernel, 6x16 tile, weights packed two k per column (c2).
//
// Exact without saturation: vpmaddubsw would add two u8*s8 products in int16,
// and 255*(-128)*2 does not fit. Instead both operands are int16 (the
// activation panel is widened once when packed; each weight vector is
// sign-extended from 16 bytes with vpmovsxbw as it is loaded), and vpmaddwd
// adds each pair of products, at most 2*255*128 = 65280, into int32 lanes.
// One vpmaddwd is 16 multiply-adds, as many as fbgemm's vpmaddubsw+vpmaddwd
// pair gets per multiply instruction, with no overflow to compensate.
#include "cpu/kernels/qgemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

namespace lucid::kernels {

namespace {

template <int MR>
__attribute__((target("avx2"))) void tile(size_t kp, const int16_t* a, size_t a_stride, const int8_t* w, int32_t* c) {
  __m256i lo[MR], hi[MR];  // columns 0-7 and 8-15 of each row
  for (int i = 0; i < MR; ++i) lo[i] = hi[i] = _mm256_setzero_si256();
  for (size_t k = 0; k < kp; k += 2) {
    // 32 bytes: columns 0..15, each (w[k], w[k+1]).
    __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16)));
    w += 32;
    for (int i = 0; i < MR; ++i) {
      int32_t pair;
      std::memcpy(&pair, a + i * a_stride + k, sizeof pair);  // (a[k], a[k+1]) as int16
      __m256i av = _mm256_set1_epi32(pair);
      lo[i] = _mm256_add_epi32(lo[i], _mm256_madd_epi16(av, w0));
      hi[i] = _mm256_add_epi32(hi[i], _mm256_madd_epi16(av, w1));
    }
  }
  for (int i = 0; i < MR; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * 16), lo[i]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * 16 + 8), hi[i]);
  }
}

void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride, const int8_t* w, int32_t* c) {
  const int16_t* a = static_cast<const int16_t*>(a_panel);
  switch (mr) {  // fixed trip counts keep the accumulators in registers
    case 1: return tile<1>(kp, a, a_stride, w, c);
    case 2: return tile<2>(kp, a, a_stride, w, c);
    case 3: return tile<3>(kp, a, a_stride, w, c);
    case 4: return tile<4>(kp, a, a_stride, w, c);
    case 5: return tile<5>(kp, a, a_stride, w, c);
    default: return tile<6>(kp, a, a_stride, w, c);
  }
}

}  // namespace

const QGemmKernel qgemm_6x16c2_avx2 = {"avx2", "qu8-qs8-gemm-6x16c2-avx2", 6, 16, 2, 2, true, cpu_has_avx2, ukernel};

}  // namespace lucid::kernels
#endif
