// AVX2 microkernel for activations below 128 ("qu7": uint8 codes whose top
// bit is clear, as PyTorch's x86 configurations produce with
// reduce_range=True), 5x16 tile, weights packed four k per column (c4).
//
// With a <= 127, vpmaddubsw's int16 pair sums are exact: |a1*w1 + a2*w2| <=
// 2 * 127 * 128 = 32512 < 32767. vpmaddwd against ones then adds the pairs
// into int32. That is 32 multiply-adds per two multiply-unit instructions,
// like the full-range kernel, but with one vpaddd per 32 instead of two and
// no weight widening, so the other vector pipes are no longer the limit.
// The driver picks this kernel only after checking every activation of the
// product is below 128 (needs_a7); any other input takes the full-range one.
#include "cpu/kernels/qgemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

namespace lucid::kernels {

namespace {

__attribute__((target("avx2"), always_inline)) inline __m256i quad_at(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);  // a[k..k+3]
  return _mm256_set1_epi32(v);
}

// acc += per column sum of four products (8 columns x 4 k in w).
__attribute__((target("avx2"), always_inline)) inline __m256i dot4(__m256i acc, __m256i a, __m256i w,
                                                                   __m256i ones) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, w), ones));
}

__attribute__((target("avx2"), always_inline)) inline void store(int32_t* c, __m256i lo, __m256i hi) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(c), lo);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + 8), hi);
}

// Five rows; rows past mr are the panel's zero padding and are not stored.
__attribute__((target("avx2"))) void tile5(int mr, size_t kp, const uint8_t* a, size_t as, const int8_t* w,
                                           int32_t* c) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i c0l = _mm256_setzero_si256(), c0h = c0l, c1l = c0l, c1h = c0l, c2l = c0l, c2h = c0l, c3l = c0l, c3h = c0l;
  __m256i c4l = c0l, c4h = c0l;
  const uint8_t *a0 = a, *a1 = a + as, *a2 = a + 2 * as, *a3 = a + 3 * as, *a4 = a + 4 * as;
  for (size_t k = 0; k < kp; k += 4, w += 64) {
    __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
    __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32));
    __m256i x = quad_at(a0 + k);
    c0l = dot4(c0l, x, w0, ones), c0h = dot4(c0h, x, w1, ones);
    x = quad_at(a1 + k);
    c1l = dot4(c1l, x, w0, ones), c1h = dot4(c1h, x, w1, ones);
    x = quad_at(a2 + k);
    c2l = dot4(c2l, x, w0, ones), c2h = dot4(c2h, x, w1, ones);
    x = quad_at(a3 + k);
    c3l = dot4(c3l, x, w0, ones), c3h = dot4(c3h, x, w1, ones);
    x = quad_at(a4 + k);
    c4l = dot4(c4l, x, w0, ones), c4h = dot4(c4h, x, w1, ones);
  }
  store(c, c0l, c0h);
  if (mr > 1) store(c + 16, c1l, c1h);
  if (mr > 2) store(c + 32, c2l, c2h);
  if (mr > 3) store(c + 48, c3l, c3h);
  if (mr > 4) store(c + 64, c4l, c4h);
}

// One row: two k-groups per step into two accumulator sets.
__attribute__((target("avx2"))) void tile1(size_t kp, const uint8_t* a, const int8_t* w, int32_t* c) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i l0 = _mm256_setzero_si256(), h0 = l0, l1 = l0, h1 = l0;
  size_t k = 0;
  for (; k + 8 <= kp; k += 8, w += 128) {
    __m256i x0 = quad_at(a + k), x1 = quad_at(a + k + 4);
    l0 = dot4(l0, x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)), ones);
    h0 = dot4(h0, x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32)), ones);
    l1 = dot4(l1, x1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64)), ones);
    h1 = dot4(h1, x1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 96)), ones);
  }
  for (; k < kp; k += 4, w += 64) {
    __m256i x0 = quad_at(a + k);
    l0 = dot4(l0, x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)), ones);
    h0 = dot4(h0, x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32)), ones);
  }
  store(c, _mm256_add_epi32(l0, l1), _mm256_add_epi32(h0, h1));
}

void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride, const int8_t* w, int32_t* c) {
  const uint8_t* a = static_cast<const uint8_t*>(a_panel);
  if (mr == 1) return tile1(kp, a, w, c);
  tile5(mr, kp, a, a_stride, w, c);
}

}  // namespace

const QGemmKernel qgemm_5x16c4_avx2_u7 = {"avx2", "qu7-qs8-gemm-5x16c4-avx2", 5, 16, 4, 4, false, false,
                                         cpu_has_avx2, ukernel, true};

}  // namespace lucid::kernels
#endif
