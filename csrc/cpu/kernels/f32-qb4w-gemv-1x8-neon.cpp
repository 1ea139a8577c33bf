// int4 weight-only GEMV, AArch64 NEON: the AVX2 kernel's 8-lane order kept
// with pairs of float32x4 (lanes 0-3, 4-7), so all kernels agree bit for
// bit with the scalar reference. vmulq then vaddq: never vfma / vmla.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "cpu/kernels/qb4w-gemv.h"

namespace lucid::kernels {

namespace {
struct F8 {
  float32x4_t a, b;
};
inline F8 add(F8 x, F8 y) { return {vaddq_f32(x.a, y.a), vaddq_f32(x.b, y.b)}; }
// 8 nibbles (one per byte of v) times x[0..8].
inline F8 term(uint8x8_t v, const float* x) {
  uint16x8_t w = vmovl_u8(v);
  float32x4_t lo = vcvtq_f32_u32(vmovl_u16(vget_low_u16(w))), hi = vcvtq_f32_u32(vmovl_u16(vget_high_u16(w)));
  return {vmulq_f32(vld1q_f32(x), lo), vmulq_f32(vld1q_f32(x + 4), hi)};
}
}  // namespace

void f32_qb4w_gemv_neon(LUCID_QB4W_GEMV_ARGS) {
  const size_t groups = K / G;
  const uint8x16_t vflip = vdupq_n_u8(flip), low = vdupq_n_u8(0x0f);
  const F8 zero{vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * (K / 2);
    F8 row = zero;
    float corr = 0.0f;
    for (size_t g = 0; g < groups; ++g) {
      F8 a0 = zero, a1 = zero, a2 = zero, a3 = zero;
      for (size_t b = g * G; b < (g + 1) * G; b += 32) {
        uint8x16_t bytes = veorq_u8(vld1q_u8(wn + b / 2), vflip);
        uint8x16_t lo = vandq_u8(bytes, low), hi = vshrq_n_u8(bytes, 4);
        a0 = add(a0, term(vget_low_u8(lo), xp + b));
        a1 = add(a1, term(vget_low_u8(hi), xp + b + 16));
        a2 = add(a2, term(vget_high_u8(lo), xp + b + 8));
        a3 = add(a3, term(vget_high_u8(hi), xp + b + 24));
      }
      const float sg = s[n * groups + g];
      F8 gsum = add(add(a0, a1), add(a2, a3));
      float32x4_t sv = vdupq_n_f32(sg);
      row = add(row, F8{vmulq_f32(gsum.a, sv), vmulq_f32(gsum.b, sv)});
      float zs = static_cast<float>(zq[n * groups + g]) * sx[g];
      float term_ = zs * sg;
      corr = corr + term_;
    }
    float32x4_t h = vaddq_f32(row.a, row.b);  // (r0+r4, r1+r5, r2+r6, r3+r7)
    float e = vgetq_lane_f32(h, 0) + vgetq_lane_f32(h, 2), o = vgetq_lane_f32(h, 1) + vgetq_lane_f32(h, 3);
    float t = e + o;
    t = t - corr;
    y[n] = bias ? t + bias[n] : t;
  }
}

}  // namespace lucid::kernels
#endif
