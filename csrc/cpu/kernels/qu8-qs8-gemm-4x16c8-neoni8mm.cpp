// NEON i8mm microkernel (FEAT_I8MM: USMMLA, unsigned x signed 8-bit matrix
// multiply-accumulate), 4x16 tile, weights packed eight k per column (c8).
// USMMLA takes a 2x8 uint8 block (two activation rows) and a 2x8 int8 block
// (two weight columns) and adds their 2x2 product to int32 lanes
// [r0c0, r0c1, r1c0, r1c1]; eight products of at most 255 * 128 per lane, no
// saturation. Apple M2 and later, Graviton3, Neoverse V1/N2 have it; called
// only when cpu_has_neon_i8mm(). Checked against the scalar reference under
// qemu-aarch64 (tests/kernels).
#include "cpu/kernels/qgemm.h"

#if defined(__aarch64__)
#include <arm_neon.h>

// Clang names the feature; GCC 12 needs it as an architecture extension.
#if defined(__clang__)
#define LUCID_TARGET_I8MM __attribute__((target("i8mm")))
#else
#define LUCID_TARGET_I8MM __attribute__((target("arch=armv8.2-a+i8mm")))
#endif

namespace lucid::kernels {

namespace {

LUCID_TARGET_I8MM void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride,
                                              const int8_t* w, int32_t* c) {
  const uint8_t* a = static_cast<const uint8_t*>(a_panel);
  int32x4_t acc[2][8];  // [row pair][column pair]
  for (auto& rp : acc)
    for (auto& v : rp) v = vdupq_n_s32(0);
  for (size_t k = 0; k < kp; k += 8, w += 128) {
    uint8x16_t a01 = vcombine_u8(vld1_u8(a + k), vld1_u8(a + a_stride + k));
    uint8x16_t a23 = vcombine_u8(vld1_u8(a + 2 * a_stride + k), vld1_u8(a + 3 * a_stride + k));
    for (int j = 0; j < 8; ++j) {
      int8x16_t wj = vld1q_s8(w + 16 * j);  // columns 2j and 2j+1, eight k each
      acc[0][j] = vusmmlaq_s32(acc[0][j], a01, wj);
      acc[1][j] = vusmmlaq_s32(acc[1][j], a23, wj);
    }
  }
  for (int p = 0; p < 2; ++p)
    for (int j = 0; j < 8; ++j) {
      int32_t v[4];
      vst1q_s32(v, acc[p][j]);
      int r0 = 2 * p, r1 = 2 * p + 1;
      if (r0 < mr) c[r0 * 16 + 2 * j] = v[0], c[r0 * 16 + 2 * j + 1] = v[1];
      if (r1 < mr) c[r1 * 16 + 2 * j] = v[2], c[r1 * 16 + 2 * j + 1] = v[3];
    }
}

}  // namespace

const QGemmKernel qgemm_4x16c8_neoni8mm = {"neon-i8mm", "qu8-qs8-gemm-4x16c8-neoni8mm", 4, 16, 8, 8, false, false,
                                           cpu_has_neon_i8mm, ukernel};

}  // namespace lucid::kernels
#endif
