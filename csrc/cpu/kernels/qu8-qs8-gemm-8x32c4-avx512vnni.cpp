// AVX-512 VNNI microkernel, 8x32 tile, weights packed four k per column (c4):
// a zmm holds 16 columns x 4 k, and vpdpbusd adds the four u8*s8 products of
// each lane (at most 4*255*128, no saturation) into int32. Two weight vectors
// per k step against eight broadcast activation quads keep 16 accumulators
// busy: 10 loads per 16 vpdpbusd (an 8x16 tile needs 9 per 8, and GCC kept
// moving its accumulators between registers). Every loop is unrolled at
// compile time (the row count is a template argument), so the accumulators
// stay in fixed registers.
//
// Besides the direct form (rows `a_stride` apart) it has the indirect form
// that convolutions use instead of an im2col copy: row i's k values are nseg
// segments of seglen bytes, segment s at rows[i] + s * seg_stride (a window
// row of kw pixels x C channels of an NHWC image).
//
// Compiled with a target attribute and called only when cpu_has_avx512vnni()
// (CPUID + XCR0) and its self-check passed. Its equality with the scalar
// reference is asserted by tests/kernels on any host that has it, and on every
// x86-64 host under SIMDe's emulation (test builds with LUCID_KERNELS_SIMDE_VNNI).
#include "cpu/kernels/qgemm.h"

#if defined(__x86_64__)
#if defined(LUCID_KERNELS_SIMDE_VNNI)  // test builds only: AVX-512 emulated by SIMDe
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#define LUCID_AVX512VNNI_TARGET
#else
#include <immintrin.h>
#define LUCID_AVX512VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))
#endif

#include <cstring>

namespace lucid::kernels {

namespace {

// acc[2i], acc[2i + 1]: row i, columns 0-15 and 16-31.
template <int MR>
LUCID_AVX512VNNI_TARGET inline void segment(size_t len, const uint8_t* const* ap, const int8_t*& w, __m512i* acc) {
  for (size_t k = 0; k < len; k += 4, w += 128) {
    const __m512i w0 = _mm512_loadu_si512(w), w1 = _mm512_loadu_si512(w + 64);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      int32_t quad;
      std::memcpy(&quad, ap[i] + k, sizeof quad);
      const __m512i b = _mm512_set1_epi32(quad);
      acc[2 * i] = _mm512_dpbusd_epi32(acc[2 * i], b, w0);
      acc[2 * i + 1] = _mm512_dpbusd_epi32(acc[2 * i + 1], b, w1);
    }
  }
}

template <int MR>
LUCID_AVX512VNNI_TARGET void tile(size_t nseg, size_t seglen, size_t seg_stride, const uint8_t* const* rows,
                                  const int8_t* w, int32_t* c) {
  __m512i acc[2 * MR];
#pragma GCC unroll 16
  for (int i = 0; i < 2 * MR; ++i) acc[i] = _mm512_setzero_si512();
  const uint8_t* ap[MR];
  for (size_t s = 0; s < nseg; ++s) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) ap[i] = rows[i] + s * seg_stride;
    segment<MR>(seglen, ap, w, acc);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 2 * MR; ++i) _mm512_storeu_si512(c + i * 16, acc[i]);
}

void iukernel(int mr, size_t nseg, size_t seglen, size_t seg_stride, const uint8_t* const* rows, const int8_t* w,
              int32_t* c) {
  switch (mr) {
    case 1: return tile<1>(nseg, seglen, seg_stride, rows, w, c);
    case 2: return tile<2>(nseg, seglen, seg_stride, rows, w, c);
    case 3: return tile<3>(nseg, seglen, seg_stride, rows, w, c);
    case 4: return tile<4>(nseg, seglen, seg_stride, rows, w, c);
    case 5: return tile<5>(nseg, seglen, seg_stride, rows, w, c);
    case 6: return tile<6>(nseg, seglen, seg_stride, rows, w, c);
    case 7: return tile<7>(nseg, seglen, seg_stride, rows, w, c);
    default: return tile<8>(nseg, seglen, seg_stride, rows, w, c);
  }
}

// The direct form: one segment of kp bytes per row. Only the mr rows given are
// read (the driver's panel is padded anyway).
void ukernel(int mr, size_t kp, const void* a_panel, size_t a_stride, const int8_t* w, int32_t* c) {
  const uint8_t* a = static_cast<const uint8_t*>(a_panel);
  const uint8_t* rows[8];
  for (int i = 0; i < 8; ++i) rows[i] = a + (i < mr ? i : 0) * a_stride;
  iukernel(mr, 1, kp, 0, rows, w, c);
}

}  // namespace

#if defined(LUCID_KERNELS_SIMDE_VNNI)
namespace {
bool emulated() { return true; }  // SIMDe runs it on any host
}  // namespace
const QGemmKernel qgemm_8x32c4_avx512vnni = {"avx512vnni", "qu8-qs8-gemm-8x32c4-avx512vnni", 8, 32, 4, 4, false, false,
                                             emulated, ukernel, false, iukernel};
#else
const QGemmKernel qgemm_8x32c4_avx512vnni = {"avx512vnni", "qu8-qs8-gemm-8x32c4-avx512vnni", 8, 32, 4, 4, false, false,
                                             cpu_has_avx512vnni, ukernel, false, iukernel};
#endif

}  // namespace lucid::kernels
#endif
