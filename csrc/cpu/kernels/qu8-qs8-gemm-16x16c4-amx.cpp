// AMX-INT8 microkernel: one 16x16 int32 tile (tmm0) accumulated by tdpbusd
// from a 16-row x 64-byte uint8 activation tile (tmm1) and a 16 x (16 columns
// x 4 k) weight tile (tmm2): exactly the c4 weight layout, 64 k per step, so
// K is padded to a multiple of 64. Deliberately small (one accumulator tile);
// a production kernel would keep 2x2 C tiles resident. Called only when
// cpu_has_amx_int8(), which includes Linux granting tile state through
// arch_prctl(ARCH_REQ_XCOMP_PERM). Not run on the machine this was written on.
#include "cpu/kernels/qgemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

namespace lucid::kernels {

namespace {

// The 64-byte tile configuration (palette 1) of the Intel SDM.
struct alignas(64) TileConfig {
  uint8_t palette_id = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

__attribute__((target("amx-tile,amx-int8"))) void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride,
                                                          const int8_t* w, int32_t* c) {
  (void)mr;  // the panel is padded to 16 rows; all 16 are computed
  TileConfig cfg;
  cfg.colsb[0] = 64, cfg.rows[0] = 16;  // C: 16 x 16 int32
  cfg.colsb[1] = 64, cfg.rows[1] = 16;  // A: 16 rows x 64 u8
  cfg.colsb[2] = 64, cfg.rows[2] = 16;  // B: 16 k-quads x (16 columns x 4 k)
  _tile_loadconfig(&cfg);
  const uint8_t* a = static_cast<const uint8_t*>(a_panel);
  _tile_zero(0);
  for (size_t k = 0; k < kp; k += 64) {
    _tile_loadd(1, a + k, a_stride);
    _tile_loadd(2, w + k * 16, 64);
    _tile_dpbusd(0, 1, 2);
  }
  _tile_stored(0, c, 64);
  _tile_release();
}

}  // namespace

const QGemmKernel qgemm_16x16c4_amx = {"amx", "qu8-qs8-gemm-16x16c4-amx", 16, 16, 4, 64, false, false, cpu_has_amx_int8,
                                       ukernel};

}  // namespace lucid::kernels
#endif
