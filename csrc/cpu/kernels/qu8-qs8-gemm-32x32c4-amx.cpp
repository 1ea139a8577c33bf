// AMX-INT8 microkernel: a 32 x 32 int32 register tile held as 2 x 2 AMX
// accumulator tiles (tmm0-3), fed per 64-k step by two 16-row x 64-byte
// activation tiles (tmm4-5: rows 0-15 and 16-31 of the panel) and two weight
// tiles (tmm6-7: columns 0-15 and 16-31). Each loaded tile feeds two tdpbusd,
// so four 1 KiB loads serve four 16x16x64 products; a single accumulator tile
// would need two loads per product and leave the unit idle waiting on them.
//
// The weight panel is the c4 layout with nr = 32: k-group g (4 k) of column j
// at byte (g * 32 + j) * 4, so one 64-k step is 16 rows of 128 bytes, columns
// 0-15 in the first 64 bytes of each row and 16-31 in the second: both weight
// tiles are plain strided loads (stride 128). K is padded to a multiple of 64.
//
// Every tile has the shape 16 rows x 64 bytes, so one configuration serves the
// whole kernel. It is loaded on every call: a thread may have run other AMX
// code (oneDNN inside PyTorch, in the same process) since our last call, and
// ldtilecfg costs a few dozen cycles against the >= 1,000 of one 32 x 32 x 64
// step. The tile state is released on return so the OS saves no tile data for
// this thread at context switches. Called only when cpu_has_amx_int8(), which
// includes Linux granting tile state through arch_prctl(ARCH_REQ_XCOMP_PERM).
#include "cpu/kernels/qgemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace lucid::kernels {

namespace {

// The 64-byte tile configuration (palette 1) of the Intel SDM: tiles 0-7,
// each 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};
// A constant in read-only data, not a local filled in before ldtilecfg: GCC
// 12's _tile_loadconfig declares its asm operand as 8 bytes, so the compiler
// may drop the stores that fill in the rest of a local configuration (it did:
// ldtilecfg then raised #GP on a half-written one).
constexpr TileConfig kConfig = {1, 0, {}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};
constexpr size_t kRow = 32 * 4;  // bytes per k-group of the weight panel (and per row of the 32 x 32 result)

// The K loop of one 32 x 32 tile: activation rows 0-15 at a, 16-31 at
// a + 16 * a_stride (kTwoRowTiles only: with 16 rows or fewer, rows 16-31
// would be padding and half the work). Tile numbers must be compile-time
// constants, hence a template rather than a run-time branch in the loop.
template <bool kTwoRowTiles>
__attribute__((target("amx-tile,amx-int8"), always_inline)) inline void k_loop(size_t kp, const uint8_t* a,
                                                                               size_t a_stride, const int8_t* w) {
  const uint8_t* a1 = a + 16 * a_stride;
  for (size_t k = 0; k < kp; k += 64) {
    _tile_loadd(4, a + k, a_stride);
    _tile_loadd(6, w + k * 32, kRow);
    _tile_loadd(7, w + k * 32 + 64, kRow);
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    if constexpr (kTwoRowTiles) {
      _tile_loadd(5, a1 + k, a_stride);
      _tile_dpbusd(2, 5, 6);
      _tile_dpbusd(3, 5, 7);
    }
  }
}

__attribute__((target("amx-tile,amx-int8"))) void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride,
                                                          const int8_t* w, int32_t* c) {
  const uint8_t* a = static_cast<const uint8_t*>(a_panel);
  _tile_loadconfig(&kConfig);
  _tile_zero(0);
  _tile_zero(1);
  if (mr > 16) {
    _tile_zero(2);
    _tile_zero(3);
    k_loop<true>(kp, a, a_stride, w);
    _tile_stored(2, c + 16 * 32, kRow);
    _tile_stored(3, c + 16 * 32 + 16, kRow);
  } else {
    k_loop<false>(kp, a, a_stride, w);
  }
  _tile_stored(0, c, kRow);
  _tile_stored(1, c + 16, kRow);
  _tile_release();
}

}  // namespace

const QGemmKernel qgemm_32x32c4_amx = {"amx", "qu8-qs8-gemm-32x32c4-amx", 32, 32, 4, 64, false, false, cpu_has_amx_int8,
                                       ukernel};

}  // namespace lucid::kernels
#endif
