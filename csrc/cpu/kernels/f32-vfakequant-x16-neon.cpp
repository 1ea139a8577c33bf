// fake_quantize f32 forward (y + STE mask) and backward, AArch64 NEON, 16
// elements per iteration; the quantize kernel's sequence followed by the
// dequantize one, NaN lanes selected to the canonical NaN.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "cpu/kernels/vquant-isa.h"
#include "cpu/kernels/vquant-scalar.h"

namespace lucid::kernels {

namespace {

template <bool PerElem>
void fq_rows(size_t rows, size_t len, const float* x, float* y, uint8_t* m, const float* s, const int32_t* z,
             float lo, float hi) {
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  const float32x4_t qnan = vreinterpretq_f32_u32(vdupq_n_u32(scalar::kCanonicalNaN));
  for (size_t r = 0; r < rows; ++r, x += len, y += len, m += len) {
    float32x4_t vs = vdupq_n_f32(s[r]), vzf = vdupq_n_f32(static_cast<float>(z[r]));
    int32x4_t vz = vdupq_n_s32(z[r]);
    size_t j = 0;
    for (; j + 16 <= len; j += 16) {
      uint32x4_t pass[4];
      for (int k = 0; k < 4; ++k) {
        size_t o = j + 4 * k;
        if (PerElem) vs = vld1q_f32(s + o), vz = vld1q_s32(z + o), vzf = vcvtq_f32_s32(vz);
        float32x4_t xv = vld1q_f32(x + o);
        float32x4_t v = vaddq_f32(vrndnq_f32(vdivq_f32(xv, vs)), vzf);
        pass[k] = vandq_u32(vcgeq_f32(v, vlo), vcleq_f32(v, vhi));
        float32x4_t c = vbslq_f32(vcltq_f32(v, vlo), vlo, v);
        c = vbslq_f32(vcgtq_f32(c, vhi), vhi, c);
        float32x4_t yv = vmulq_f32(vcvtq_f32_s32(vsubq_s32(vcvtq_s32_f32(c), vz)), vs);
        vst1q_f32(y + o, vbslq_f32(vmvnq_u32(vceqq_f32(xv, xv)), qnan, yv));
      }
      uint16x8_t p01 = vcombine_u16(vmovn_u32(pass[0]), vmovn_u32(pass[1]));
      uint16x8_t p23 = vcombine_u16(vmovn_u32(pass[2]), vmovn_u32(pass[3]));
      vst1q_u8(m + j, vandq_u8(vcombine_u8(vmovn_u16(p01), vmovn_u16(p23)), vdupq_n_u8(1)));
    }
    for (; j < len; ++j) {
      size_t p = PerElem ? j : r;
      y[j] = scalar::fake_quantize_one(x[j], s[p], z[p], lo, hi, m[j]);
    }
  }
}

}  // namespace

void fake_quantize_neon(size_t rows, size_t len, const float* x, float* y, uint8_t* m, const float* s,
                        const int32_t* z, unsigned flags, float lo, float hi) {
  if (flags & kPerElem) fq_rows<true>(rows, len, x, y, m, s, z, lo, hi);
  else fq_rows<false>(rows, len, x, y, m, s, z, lo, hi);
}

void mask_grad_neon(size_t n, const uint32_t* dy, const uint8_t* m, uint32_t* dx, unsigned) {
  const uint32x4_t one = vdupq_n_u32(1);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    uint8x16_t mb = vld1q_u8(m + i);
    uint16x8_t lo = vmovl_u8(vget_low_u8(mb)), hi = vmovl_u8(vget_high_u8(mb));
    uint32x4_t mk[4] = {vmovl_u16(vget_low_u16(lo)), vmovl_u16(vget_high_u16(lo)), vmovl_u16(vget_low_u16(hi)),
                        vmovl_u16(vget_high_u16(hi))};
    for (int k = 0; k < 4; ++k) vst1q_u32(dx + i + 4 * k, vandq_u32(vld1q_u32(dy + i + 4 * k), vtstq_u32(mk[k], one)));
  }
  for (; i < n; ++i) dx[i] = (m[i] & 1u) ? dy[i] : 0u;
}

}  // namespace lucid::kernels
#endif
