// AVX2 microkernel, 5x16 tile (and a 1x16 one for single rows), weights
// packed two k per column (c2).
//
// Exact without saturation: vpmaddubsw would add two u8*s8 products in int16,
// and 255*(-128)*2 does not fit. Instead both operands are int16 (the
// activation panel is widened once when packed; each weight vector is
// sign-extended from 16 bytes with vpmovsxbw as it is loaded), and vpmaddwd
// adds each pair of products, at most 2*255*128 = 65280, into int32 lanes.
// One vpmaddwd is 16 multiply-adds, as many as fbgemm's vpmaddubsw+vpmaddwd
// pair gets per multiply instruction, with no overflow to compensate.
//
// The accumulators are named variables, not an array: GCC keeps an array of
// vectors on the stack. 10 accumulators + 2 weights + broadcast + product fit
// the 16 ymm registers without spills.
#include "cpu/kernels/qgemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

namespace lucid::kernels {

namespace {

__attribute__((target("avx2"), always_inline)) inline __m256i pair_at(const int16_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);  // (a[k], a[k+1]) as one 32-bit lane
  return _mm256_set1_epi32(v);
}

__attribute__((target("avx2"), always_inline)) inline __m256i madd_add(__m256i acc, __m256i a, __m256i w) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, w));
}

__attribute__((target("avx2"), always_inline)) inline void store(int32_t* c, __m256i lo, __m256i hi) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(c), lo);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + 8), hi);
}

// Five rows; rows past mr are the panel's zero padding and are not stored.
__attribute__((target("avx2"))) void tile5(int mr, size_t kp, const int16_t* a, size_t as, const int8_t* w,
                                           int32_t* c) {
  __m256i c0l = _mm256_setzero_si256(), c0h = c0l, c1l = c0l, c1h = c0l, c2l = c0l, c2h = c0l, c3l = c0l, c3h = c0l;
  __m256i c4l = c0l, c4h = c0l;
  const int16_t *a0 = a, *a1 = a + as, *a2 = a + 2 * as, *a3 = a + 3 * as, *a4 = a + 4 * as;
  for (size_t k = 0; k < kp; k += 2, w += 32) {
    __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16)));
    __m256i x = pair_at(a0 + k);
    c0l = madd_add(c0l, x, w0), c0h = madd_add(c0h, x, w1);
    x = pair_at(a1 + k);
    c1l = madd_add(c1l, x, w0), c1h = madd_add(c1h, x, w1);
    x = pair_at(a2 + k);
    c2l = madd_add(c2l, x, w0), c2h = madd_add(c2h, x, w1);
    x = pair_at(a3 + k);
    c3l = madd_add(c3l, x, w0), c3h = madd_add(c3h, x, w1);
    x = pair_at(a4 + k);
    c4l = madd_add(c4l, x, w0), c4h = madd_add(c4h, x, w1);
  }
  store(c, c0l, c0h);
  if (mr > 1) store(c + 16, c1l, c1h);
  if (mr > 2) store(c + 32, c2l, c2h);
  if (mr > 3) store(c + 48, c3l, c3h);
  if (mr > 4) store(c + 64, c4l, c4h);
}

// One row (matrix-vector products): two k-pairs per step into two
// accumulator sets, so consecutive vpmaddwd results do not wait on one add.
__attribute__((target("avx2"))) void tile1(size_t kp, const int16_t* a, const int8_t* w, int32_t* c) {
  __m256i l0 = _mm256_setzero_si256(), h0 = l0, l1 = l0, h1 = l0;
  size_t k = 0;
  for (; k + 4 <= kp; k += 4, w += 64) {
    // A matrix-vector product streams the weights once: fetch ahead of the
    // hardware prefetcher, which restarts at every 4 KiB page.
    _mm_prefetch(reinterpret_cast<const char*>(w) + 1024, _MM_HINT_T0);
    __m256i x0 = pair_at(a + k), x1 = pair_at(a + k + 2);
    l0 = madd_add(l0, x0, _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w))));
    h0 = madd_add(h0, x0, _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16))));
    l1 = madd_add(l1, x1, _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 32))));
    h1 = madd_add(h1, x1, _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 48))));
  }
  for (; k < kp; k += 2, w += 32) {
    __m256i x0 = pair_at(a + k);
    l0 = madd_add(l0, x0, _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w))));
    h0 = madd_add(h0, x0, _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16))));
  }
  store(c, _mm256_add_epi32(l0, l1), _mm256_add_epi32(h0, h1));
}

void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride, const int8_t* w, int32_t* c) {
  const int16_t* a = static_cast<const int16_t*>(a_panel);
  if (mr == 1) return tile1(kp, a, w, c);
  tile5(mr, kp, a, a_stride, w, c);
}

}  // namespace

const QGemmKernel qgemm_5x16c2_avx2 = {"avx2", "qu8-qs8-gemm-5x16c2-avx2", 5, 16, 2, 2, true, false, cpu_has_avx2, ukernel};

}  // namespace lucid::kernels
#endif
