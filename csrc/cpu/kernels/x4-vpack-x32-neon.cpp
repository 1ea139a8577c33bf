// int4 pack / unpack of consecutive code pairs, AArch64 NEON, 32 codes per
// iteration: vld2q / vst2q (de)interleave even and odd codes for free.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "cpu/kernels/vquant-isa.h"
#include "cpu/kernels/vquant-scalar.h"

namespace lucid::kernels {

void pack4_neon(size_t pairs, const uint8_t* c, uint8_t* out) {
  size_t i = 0;
  for (; i + 16 <= pairs; i += 16) {
    uint8x16x2_t eo = vld2q_u8(c + 2 * i);  // val[0] even codes, val[1] odd codes
    vst1q_u8(out + i, vorrq_u8(vandq_u8(eo.val[0], vdupq_n_u8(0x0f)), vshlq_n_u8(eo.val[1], 4)));
  }
  for (; i < pairs; ++i) out[i] = static_cast<uint8_t>((c[2 * i] & 0x0f) | ((c[2 * i + 1] & 0x0f) << 4));
}

void unpack4_neon(size_t pairs, const uint8_t* p, uint8_t* out, bool is_signed) {
  const uint8x16_t flip = vdupq_n_u8(is_signed ? 8 : 0);
  size_t i = 0;
  for (; i + 16 <= pairs; i += 16) {
    uint8x16_t b = vld1q_u8(p + i);
    uint8x16x2_t eo;
    eo.val[0] = vsubq_u8(veorq_u8(vandq_u8(b, vdupq_n_u8(0x0f)), flip), flip);  // (n ^ 8) - 8 when signed
    eo.val[1] = vsubq_u8(veorq_u8(vshrq_n_u8(b, 4), flip), flip);
    vst2q_u8(out + 2 * i, eo);
  }
  for (; i < pairs; ++i) {
    out[2 * i] = scalar::unpack_nibble(p[i] & 0x0fu, is_signed);
    out[2 * i + 1] = scalar::unpack_nibble(p[i] >> 4, is_signed);
  }
}

}  // namespace lucid::kernels
#endif
