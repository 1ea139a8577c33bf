// int4 GEMV with int8 activations, AArch64 NEON with FEAT_DotProd: 8 outputs
// at a time. Per 16 weight bytes (32 k) of a row: one load, and / shift for
// the two nibble vectors (values 0..15, valid as signed bytes), two SDOT into
// int32 lanes (each adds four products). The 8 row sums of a group are
// reduced by pairwise adds into two vectors (rows 0-3, 4-7), corrected by
// z' * sx and combined in float as qd8-qb4w-gemv.h orders it: the AVX2
// kernel's lane operations (vmulq then vaddq, never vfma). Chosen only when
// cpu_has_neon_dot(); checked against the scalar reference under qemu.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <algorithm>

#include "cpu/kernels/qd8-qb4w-gemv.h"

// Clang names the feature; GCC 12 needs it as an architecture extension.
#if defined(__clang__)
#define LUCID_TARGET_DOTPROD __attribute__((target("dotprod")))
#else
#define LUCID_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif

namespace lucid::kernels {

LUCID_TARGET_DOTPROD void qd8_qb4w_gemv_neondot(LUCID_QD8_QB4W_GEMV_ARGS) {
  const size_t groups = K / G, bytes = K / 2;
  const uint8x16_t low = vdupq_n_u8(0x0f), vflip = vdupq_n_u8(flip);
  for (size_t n0 = 0; n0 < rows; n0 += 8) {
    const size_t nr = std::min<size_t>(8, rows - n0);
    const uint8_t* wr[8];
    size_t off[8];
    for (size_t i = 0; i < 8; ++i) {  // rows past the end repeat the last one; their lanes are dropped
      size_t r = std::min(i, nr - 1);
      wr[i] = w + (n0 + r) * bytes;
      off[i] = (n0 + r) * groups;
    }
    float32x4_t u0 = vdupq_n_f32(0.0f), u1 = u0;
    for (size_t g = 0; g < groups; ++g) {
      int32x4_t acc[8];
      for (auto& a : acc) a = vdupq_n_s32(0);
      for (size_t k = g * G; k < (g + 1) * G; k += 32) {
        const size_t c = k / 64 * 64, h = (k % 64) / 2;  // h: 0 or 16
        const int8x16_t xl = vld1q_s8(xp + c + h), xh = vld1q_s8(xp + c + 32 + h);
        for (int i = 0; i < 8; ++i) {
          uint8x16_t v = veorq_u8(vld1q_u8(wr[i] + k / 2), vflip);
          int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(v, low)), hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
          acc[i] = vdotq_s32(vdotq_s32(acc[i], lo, xl), hi, xh);
        }
      }
      int32x4_t d0 = vpaddq_s32(vpaddq_s32(acc[0], acc[1]), vpaddq_s32(acc[2], acc[3]));
      int32x4_t d1 = vpaddq_s32(vpaddq_s32(acc[4], acc[5]), vpaddq_s32(acc[6], acc[7]));
      int32_t zv[8];
      float sv[8];
      for (int i = 0; i < 8; ++i) {
        zv[i] = zq ? zq[off[i] + g] : 8;
        sv[i] = s[off[i] + g];
      }
      const int32x4_t sxg = vdupq_n_s32(sx[g]);
      int32x4_t a0 = vsubq_s32(d0, vmulq_s32(vld1q_s32(zv), sxg)), a1 = vsubq_s32(d1, vmulq_s32(vld1q_s32(zv + 4), sxg));
      u0 = vaddq_f32(u0, vmulq_f32(vcvtq_f32_s32(a0), vld1q_f32(sv)));
      u1 = vaddq_f32(u1, vmulq_f32(vcvtq_f32_s32(a1), vld1q_f32(sv + 4)));
    }
    const float32x4_t vsa = vdupq_n_f32(sa);
    float out[8];
    vst1q_f32(out, vmulq_f32(u0, vsa));
    vst1q_f32(out + 4, vmulq_f32(u1, vsa));
    for (size_t i = 0; i < nr; ++i) y[n0 + i] = bias ? out[i] + bias[n0 + i] : out[i];
  }
}

}  // namespace lucid::kernels
#endif
