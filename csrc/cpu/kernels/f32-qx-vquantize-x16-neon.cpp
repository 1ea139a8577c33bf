// quantize f32 -> int8 / uint8 / int32, AArch64 NEON, 16 elements per
// iteration: vdivq_f32 (true division), vrndnq_f32 (nearest-even), vaddq,
// clamp with compare + select (the scalar ternaries exactly), NaN lanes take
// the integer z; codes are in range, so the narrowing moves are exact.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <type_traits>

#include "cpu/kernels/vquant-isa.h"
#include "cpu/kernels/vquant-scalar.h"

namespace lucid::kernels {

namespace {

inline int32x4_t code4(float32x4_t x, float32x4_t s, float32x4_t zf, int32x4_t z, float32x4_t lo, float32x4_t hi) {
  float32x4_t t = vdivq_f32(x, s);
  float32x4_t v = vaddq_f32(vrndnq_f32(t), zf);
  float32x4_t c = vbslq_f32(vcltq_f32(v, lo), lo, v);
  c = vbslq_f32(vcgtq_f32(c, hi), hi, c);
  uint32x4_t nan = vmvnq_u32(vceqq_f32(x, x));
  return vbslq_s32(nan, z, vcvtq_s32_f32(c));
}

template <class Q>
inline void store16(Q* q, int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
  if constexpr (sizeof(Q) == 4) {
    vst1q_s32(q, a), vst1q_s32(q + 4, b), vst1q_s32(q + 8, c), vst1q_s32(q + 12, d);
  } else {
    int16x8_t ab = vcombine_s16(vmovn_s32(a), vmovn_s32(b)), cd = vcombine_s16(vmovn_s32(c), vmovn_s32(d));
    int8x16_t bytes = vcombine_s8(vmovn_s16(ab), vmovn_s16(cd));
    vst1q_s8(reinterpret_cast<int8_t*>(q), bytes);
  }
}

template <class Q, bool PerElem>
void quantize_rows(size_t rows, size_t len, const float* x, Q* q, const float* s, const int32_t* z, float lo,
                   float hi) {
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  for (size_t r = 0; r < rows; ++r, x += len, q += len) {
    float32x4_t vs = vdupq_n_f32(s[r]), vzf = vdupq_n_f32(static_cast<float>(z[r]));
    int32x4_t vz = vdupq_n_s32(z[r]);
    size_t j = 0;
    for (; j + 16 <= len; j += 16) {
      int32x4_t c[4];
      for (int k = 0; k < 4; ++k) {
        if (PerElem) {
          vs = vld1q_f32(s + j + 4 * k);
          vz = vld1q_s32(z + j + 4 * k);
          vzf = vcvtq_f32_s32(vz);
        }
        c[k] = code4(vld1q_f32(x + j + 4 * k), vs, vzf, vz, vlo, vhi);
      }
      store16(q + j, c[0], c[1], c[2], c[3]);
    }
    for (; j < len; ++j) {
      size_t p = PerElem ? j : r;
      q[j] = static_cast<Q>(scalar::quantize_one(x[j], s[p], z[p], lo, hi));
    }
  }
}

}  // namespace

template <class Q>
void quantize_neon(size_t rows, size_t len, const float* x, Q* q, const float* s, const int32_t* z, unsigned flags,
                   float lo, float hi) {
  if (flags & kPerElem) quantize_rows<Q, true>(rows, len, x, q, s, z, lo, hi);
  else quantize_rows<Q, false>(rows, len, x, q, s, z, lo, hi);
}

template void quantize_neon<int8_t>(size_t, size_t, const float*, int8_t*, const float*, const int32_t*, unsigned, float, float);
template void quantize_neon<uint8_t>(size_t, size_t, const float*, uint8_t*, const float*, const int32_t*, unsigned, float, float);
template void quantize_neon<int32_t>(size_t, size_t, const float*, int32_t*, const float*, const int32_t*, unsigned, float, float);

}  // namespace lucid::kernels
#endif
