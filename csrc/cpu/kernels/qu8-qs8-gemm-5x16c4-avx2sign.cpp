// AVX2 microkernel for full-range uint8 activations x int8 weights with no
// -128 code ("sign" form), 5x16 tile, weights packed four k per column (c4).
//
// The activation panel holds a' = a - 128 as int8 (a_minus128; the driver
// adds 128 * column sum back). Per k: a' * w = |a'| * (sign(a') * w), where
// vpabsb gives |a'| in 0..128 as an unsigned byte (|-128| = 0x80 = 128) and
// vpsignb(w, a') gives sign(a') * w, which stays in -127..127 because w is
// never -128. vpmaddubsw then adds two such products into int16 lanes, at
// most 2 * 128 * 127 = 32512 in magnitude: no saturation, so the sum is the
// exact integer one, and vpmaddwd against ones widens the pairs into int32.
// The driver chooses this kernel only for weights it has checked once, when
// packing, to hold no -128 (needs_w127); others take the c2 kernel.
#include "cpu/kernels/qgemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

namespace lucid::kernels {

namespace {

__attribute__((target("avx2"), always_inline)) inline __m256i quad_at(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);  // a'[k..k+3]
  return _mm256_set1_epi32(v);
}

// acc += per column sum of four products a' * w (8 columns x 4 k in w);
// ax = |a'|, x = a'.
__attribute__((target("avx2"), always_inline)) inline __m256i dot4(__m256i acc, __m256i ax, __m256i x, __m256i w,
                                                                   __m256i ones) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(ax, _mm256_sign_epi8(w, x)), ones));
}

__attribute__((target("avx2"), always_inline)) inline void store(int32_t* c, __m256i lo, __m256i hi) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(c), lo);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + 8), hi);
}

// Five rows; rows past mr are the panel's zero padding and are not stored.
__attribute__((target("avx2"))) void tile5(int mr, size_t kp, const int8_t* a, size_t as, const int8_t* w,
                                           int32_t* c) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i c0l = _mm256_setzero_si256(), c0h = c0l, c1l = c0l, c1h = c0l, c2l = c0l, c2h = c0l, c3l = c0l, c3h = c0l;
  __m256i c4l = c0l, c4h = c0l;
  const int8_t *a0 = a, *a1 = a + as, *a2 = a + 2 * as, *a3 = a + 3 * as, *a4 = a + 4 * as;
  for (size_t k = 0; k < kp; k += 4, w += 64) {
    __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
    __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32));
    __m256i x = quad_at(a0 + k), ax = _mm256_abs_epi8(x);
    c0l = dot4(c0l, ax, x, w0, ones), c0h = dot4(c0h, ax, x, w1, ones);
    x = quad_at(a1 + k), ax = _mm256_abs_epi8(x);
    c1l = dot4(c1l, ax, x, w0, ones), c1h = dot4(c1h, ax, x, w1, ones);
    x = quad_at(a2 + k), ax = _mm256_abs_epi8(x);
    c2l = dot4(c2l, ax, x, w0, ones), c2h = dot4(c2h, ax, x, w1, ones);
    x = quad_at(a3 + k), ax = _mm256_abs_epi8(x);
    c3l = dot4(c3l, ax, x, w0, ones), c3h = dot4(c3h, ax, x, w1, ones);
    x = quad_at(a4 + k), ax = _mm256_abs_epi8(x);
    c4l = dot4(c4l, ax, x, w0, ones), c4h = dot4(c4h, ax, x, w1, ones);
  }
  store(c, c0l, c0h);
  if (mr > 1) store(c + 16, c1l, c1h);
  if (mr > 2) store(c + 32, c2l, c2h);
  if (mr > 3) store(c + 48, c3l, c3h);
  if (mr > 4) store(c + 64, c4l, c4h);
}

// One row: two k-groups per step into two accumulator sets.
__attribute__((target("avx2"))) void tile1(size_t kp, const int8_t* a, const int8_t* w, int32_t* c) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i l0 = _mm256_setzero_si256(), h0 = l0, l1 = l0, h1 = l0;
  size_t k = 0;
  for (; k + 8 <= kp; k += 8, w += 128) {
    _mm_prefetch(reinterpret_cast<const char*>(w) + 1024, _MM_HINT_T0);
    __m256i x0 = quad_at(a + k), x1 = quad_at(a + k + 4);
    __m256i ax0 = _mm256_abs_epi8(x0), ax1 = _mm256_abs_epi8(x1);
    l0 = dot4(l0, ax0, x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)), ones);
    h0 = dot4(h0, ax0, x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32)), ones);
    l1 = dot4(l1, ax1, x1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64)), ones);
    h1 = dot4(h1, ax1, x1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 96)), ones);
  }
  for (; k < kp; k += 4, w += 64) {
    __m256i x0 = quad_at(a + k), ax0 = _mm256_abs_epi8(x0);
    l0 = dot4(l0, ax0, x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)), ones);
    h0 = dot4(h0, ax0, x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32)), ones);
  }
  store(c, _mm256_add_epi32(l0, l1), _mm256_add_epi32(h0, h1));
}

void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride, const int8_t* w, int32_t* c) {
  const int8_t* a = static_cast<const int8_t*>(a_panel);
  if (mr == 1) return tile1(kp, a, w, c);
  tile5(mr, kp, a, a_stride, w, c);
}

}  // namespace

const QGemmKernel qgemm_5x16c4_avx2_sign = {"avx2", "qu8-qs8-gemm-5x16c4-avx2sign", 5, 16, 4, 4, false, true,
                                           cpu_has_avx2, ukernel, false, true};

}  // namespace lucid::kernels
#endif
