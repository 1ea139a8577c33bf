// dequantize int8 / uint8 -> f32, AArch64 NEON, 16 elements per iteration:
// widen to int32, subtract z (exact), vcvtq_f32_s32 (nearest-even), vmulq.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <type_traits>

#include "cpu/kernels/vquant-isa.h"
#include "cpu/kernels/vquant-scalar.h"

namespace lucid::kernels {

namespace {

// 16 codes widened to four int32x4 vectors, in order.
template <class Q>
inline void widen16(const Q* q, int32x4_t out[4]) {
  int16x8_t lo, hi;
  if constexpr (std::is_signed_v<Q>) {
    int8x16_t b = vld1q_s8(reinterpret_cast<const int8_t*>(q));
    lo = vmovl_s8(vget_low_s8(b)), hi = vmovl_s8(vget_high_s8(b));
  } else {
    uint8x16_t b = vld1q_u8(reinterpret_cast<const uint8_t*>(q));
    lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(b))), hi = vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(b)));
  }
  out[0] = vmovl_s16(vget_low_s16(lo)), out[1] = vmovl_s16(vget_high_s16(lo));
  out[2] = vmovl_s16(vget_low_s16(hi)), out[3] = vmovl_s16(vget_high_s16(hi));
}

template <class Q, bool PerElem>
void dequantize_rows(size_t rows, size_t len, const Q* q, float* y, const float* s, const int32_t* z) {
  for (size_t r = 0; r < rows; ++r, q += len, y += len) {
    float32x4_t vs = vdupq_n_f32(s[r]);
    int32x4_t vz = vdupq_n_s32(z[r]);
    size_t j = 0;
    for (; j + 16 <= len; j += 16) {
      int32x4_t w[4];
      widen16(q + j, w);
      for (int k = 0; k < 4; ++k) {
        if (PerElem) vs = vld1q_f32(s + j + 4 * k), vz = vld1q_s32(z + j + 4 * k);
        vst1q_f32(y + j + 4 * k, vmulq_f32(vcvtq_f32_s32(vsubq_s32(w[k], vz)), vs));
      }
    }
    for (; j < len; ++j) {
      size_t p = PerElem ? j : r;
      y[j] = scalar::dequantize_one(q[j], s[p], z[p]);
    }
  }
}

}  // namespace

template <class Q>
void dequantize_neon(size_t rows, size_t len, const Q* q, float* y, const float* s, const int32_t* z, unsigned flags) {
  if (flags & kPerElem) dequantize_rows<Q, true>(rows, len, q, y, s, z);
  else dequantize_rows<Q, false>(rows, len, q, y, s, z);
}

template void dequantize_neon<int8_t>(size_t, size_t, const int8_t*, float*, const float*, const int32_t*, unsigned);
template void dequantize_neon<uint8_t>(size_t, size_t, const uint8_t*, float*, const float*, const int32_t*, unsigned);

}  // namespace lucid::kernels
#endif
