// NEON dot-product microkernel (FEAT_DotProd: SDOT), 4x16 tile, weights
// packed four k per column (c4). SDOT multiplies int8 by int8, so the
// activation panel holds xu - 128 (a_minus128) and the driver adds
// 128 * column sum back; each SDOT lane adds four products of at most
// 128 * 128, no saturation. Apple M1 and later and most arm64 Linux cores
// have it; called only when cpu_has_neon_dot(). Checked against the scalar
// reference under qemu-aarch64 (tests/kernels, scripts/check-arm64-qgemm).
#include "cpu/kernels/qgemm.h"

#if defined(__aarch64__)
#include <arm_neon.h>

// Clang names the feature; GCC 12 needs it as an architecture extension.
#if defined(__clang__)
#define LUCID_TARGET_DOTPROD __attribute__((target("dotprod")))
#else
#define LUCID_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif

namespace lucid::kernels {

namespace {

LUCID_TARGET_DOTPROD void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride,
                                                 const int8_t* w, int32_t* c) {
  const int8_t* a = static_cast<const int8_t*>(a_panel);
  int32x4_t acc[4][4];
  for (auto& row : acc)
    for (auto& v : row) v = vdupq_n_s32(0);
  // 16 k per step: one 16-byte load per row covers four k-groups, and
  // vdotq_laneq_s32 picks one group per lane.
  for (size_t k = 0; k < kp; k += 16) {
    int8x16_t ar[4];
    for (int i = 0; i < 4; ++i) ar[i] = vld1q_s8(a + i * a_stride + k);
    for (int g = 0; g < 4; ++g, w += 64) {
      int8x16_t w0 = vld1q_s8(w), w1 = vld1q_s8(w + 16), w2 = vld1q_s8(w + 32), w3 = vld1q_s8(w + 48);
      for (int i = 0; i < 4; ++i) {
        int8x16_t x = ar[i];
        switch (g) {  // the lane index must be a constant
          case 0:
            acc[i][0] = vdotq_laneq_s32(acc[i][0], w0, x, 0), acc[i][1] = vdotq_laneq_s32(acc[i][1], w1, x, 0);
            acc[i][2] = vdotq_laneq_s32(acc[i][2], w2, x, 0), acc[i][3] = vdotq_laneq_s32(acc[i][3], w3, x, 0);
            break;
          case 1:
            acc[i][0] = vdotq_laneq_s32(acc[i][0], w0, x, 1), acc[i][1] = vdotq_laneq_s32(acc[i][1], w1, x, 1);
            acc[i][2] = vdotq_laneq_s32(acc[i][2], w2, x, 1), acc[i][3] = vdotq_laneq_s32(acc[i][3], w3, x, 1);
            break;
          case 2:
            acc[i][0] = vdotq_laneq_s32(acc[i][0], w0, x, 2), acc[i][1] = vdotq_laneq_s32(acc[i][1], w1, x, 2);
            acc[i][2] = vdotq_laneq_s32(acc[i][2], w2, x, 2), acc[i][3] = vdotq_laneq_s32(acc[i][3], w3, x, 2);
            break;
          default:
            acc[i][0] = vdotq_laneq_s32(acc[i][0], w0, x, 3), acc[i][1] = vdotq_laneq_s32(acc[i][1], w1, x, 3);
            acc[i][2] = vdotq_laneq_s32(acc[i][2], w2, x, 3), acc[i][3] = vdotq_laneq_s32(acc[i][3], w3, x, 3);
            break;
        }
      }
    }
  }
  for (int i = 0; i < mr && i < 4; ++i)
    for (int j = 0; j < 4; ++j) vst1q_s32(c + i * 16 + j * 4, acc[i][j]);
}

}  // namespace

const QGemmKernel qgemm_4x16c4_neondot = {"neon-dot", "qu8-qs8-gemm-4x16c4-neondot", 4, 16, 4, 16, false, true,
                                          cpu_has_neon_dot, ukernel};

}  // namespace lucid::kernels
#endif
