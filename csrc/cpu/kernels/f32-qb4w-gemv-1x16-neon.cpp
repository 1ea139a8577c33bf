// int4 weight-only GEMV, AArch64 NEON: the 16 lanes of qb4w-gemv.h in four
// float32x4 for each of A, C and the row. vfmaq_f32 is the fused
// multiply-add the order asks for (one rounding), so this kernel agrees bit
// for bit with the scalar reference.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "cpu/kernels/qb4w-gemv.h"

namespace lucid::kernels {

namespace {
struct F16 {
  float32x4_t v[4];
};
inline F16 zero16() {
  const float32x4_t z = vdupq_n_f32(0.0f);
  return {{z, z, z, z}};
}
// acc + x[0..16] * float(nibbles), one fused multiply-add per lane.
inline void fma16(F16& acc, uint8x16_t nib, const float* x) {
  const uint16x8_t lo = vmovl_u8(vget_low_u8(nib)), hi = vmovl_u8(vget_high_u8(nib));
  acc.v[0] = vfmaq_f32(acc.v[0], vld1q_f32(x), vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo))));
  acc.v[1] = vfmaq_f32(acc.v[1], vld1q_f32(x + 4), vcvtq_f32_u32(vmovl_u16(vget_high_u16(lo))));
  acc.v[2] = vfmaq_f32(acc.v[2], vld1q_f32(x + 8), vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi))));
  acc.v[3] = vfmaq_f32(acc.v[3], vld1q_f32(x + 12), vcvtq_f32_u32(vmovl_u16(vget_high_u16(hi))));
}
}  // namespace

void f32_qb4w_gemv_neon(LUCID_QB4W_GEMV_ARGS) {
  const size_t groups = K / G;
  const uint8x16_t vflip = vdupq_n_u8(flip), low = vdupq_n_u8(0x0f);
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * (K / 2);
    F16 row = zero16();
    float corr = 0.0f;
    for (size_t g = 0; g < groups; ++g) {
      F16 a = zero16(), c = zero16();
      for (size_t b = g * G; b < (g + 1) * G; b += 32) {
        const uint8x16_t bytes = veorq_u8(vld1q_u8(wn + b / 2), vflip);
        fma16(a, vandq_u8(bytes, low), xp + b);
        fma16(c, vshrq_n_u8(bytes, 4), xp + b + 16);
      }
      const float sg = s[n * groups + g];
      const float32x4_t sv = vdupq_n_f32(sg);
      for (int j = 0; j < 4; ++j) row.v[j] = vfmaq_f32(row.v[j], vaddq_f32(a.v[j], c.v[j]), sv);
      float zs = static_cast<float>(zq ? zq[n * groups + g] : 8) * sx[g];
      float term = zs * sg;
      corr = corr + term;
    }
    // The tree of qb4w-gemv.h: h8 = lanes 0-7 + lanes 8-15, then halves of 4, then of 2.
    const float32x4_t h8a = vaddq_f32(row.v[0], row.v[2]), h8b = vaddq_f32(row.v[1], row.v[3]);
    const float32x4_t h4 = vaddq_f32(h8a, h8b);
    const float h20 = vgetq_lane_f32(h4, 0) + vgetq_lane_f32(h4, 2), h21 = vgetq_lane_f32(h4, 1) + vgetq_lane_f32(h4, 3);
    float t = h20 + h21;
    t = t - corr;
    y[n] = bias ? t + bias[n] : t;
  }
}

}  // namespace lucid::kernels
#endif
