// The int8 GEMM driver over the microkernels of cpu/kernels/qgemm.h: packed
// weights, the product with its fused epilogue of docs/numerics.md ("Integer
// matrix product and requantization"), threaded on lucid's pool.
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "cpu/kernels/qgemm.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace lucid::kernels {

// Weights packed once for one kernel's layout, with the per-column sums the
// zero-point correction needs. Callers cache it (pack at convert / first use).
struct QPackedWeights {
  const QGemmKernel* kernel = nullptr;
  int64_t n = 0, k = 0, kp = 0;
  std::vector<int8_t> data;
  std::vector<int32_t> col_sum;  // sum_k w[n][k] of the raw int8 codes
};
// w: (n, k) int8 codes, row stride ldw.
QPackedWeights qgemm_pack_weights(const QGemmKernel& kernel, const int8_t* w, int64_t n, int64_t k, int64_t ldw);

// What the epilogue writes, per docs/numerics.md:
//   acc[m,n] = sum_k (x - zx)(w - zw[n]) + bias[n]   (int32, two's complement)
//   Int32:  out = acc
//   Float:  out = fl(float(acc) * scale[n])
//   Int8 / UInt8 / Requant32: out = clamp(fl(rint(fl(float(acc) * scale[n])) + zy), lo, hi)
enum class QOut { Int32, Float, Int8, UInt8, Requant32 };

struct QGemmParams {
  const void* x = nullptr;  // (m, k) activation codes, row stride ldx
  bool x_signed = false;    // int8 (qint8) activations, else uint8 (quint8)
  int64_t m = 0, ldx = 0;
  int32_t zx = 0;
  const int32_t* zw = nullptr;    // n weight zero points
  const int32_t* bias = nullptr;  // n int32 biases (bias_q), or null
  QOut out_kind = QOut::Int32;
  const float* scale = nullptr;   // n: sxw (Float) or the multipliers M (requantizing kinds)
  float zy = 0, lo = 0, hi = 0;   // requantization zero point and float clamp bounds
  void* out = nullptr;            // (m, n) row stride ldo
  int64_t ldo = 0;
};

// Runs the product and fused epilogue with w's kernel, threaded over M and N
// tiles on lucid's pool.
void qgemm(const QPackedWeights& w, const QGemmParams& p);

// The indirect product (convolution without an im2col copy): output row m is
// pixel q = m % P of image m / P, at (q / ow, q % ow), and its kp = nseg * seglen
// activation codes are nseg segments of seglen bytes, segment s at
//   base + (m / P) * image_stride + (q / ow) * row_step + (q % ow) * col_step + s * seg_stride
// (uint8 codes: the caller flips int8 codes and passes zx + 128 with
// x_signed = false). p.x and p.ldx are unused. Same sums and epilogue as qgemm.
struct QIGemmGeometry {
  const uint8_t* base = nullptr;
  int64_t image_stride = 0, P = 1, ow = 1, row_step = 0, col_step = 0;
  int64_t nseg = 1, seglen = 0, seg_stride = 0;
  // Byte outputs only: when set, the output goes to NCHW planes here (image i's
  // plane of channel n at nchw + i * nchw_image_stride + n * P) instead of p.out.
  uint8_t* nchw = nullptr;
  int64_t nchw_image_stride = 0;
};
// The kernel can serve qigemm: 8-bit panels without the -128 shift. Kernels
// with the indirect form read the windows in place; the others (AMX) get each
// row tile's windows gathered into a panel, once for all its column tiles.
bool qigemm_supports(const QGemmKernel& kern);
// This geometry fits w's kernel: seglen a multiple of the kernel's kr,
// K = nseg * seglen, and for the indirect form K = kp (no padding to walk).
bool qigemm_fits(const QPackedWeights& w, const QIGemmGeometry& g);
void qigemm(const QPackedWeights& w, const QIGemmGeometry& g, const QGemmParams& p);

#if defined(__x86_64__)
// The epilogue's float steps for 16 int32 sums `acc` (bias and corrections
// already added), as every AVX-512 epilogue performs them: cvtdq2ps, mulps by
// the scale; Float outputs stop there; codes go on with roundps to nearest
// even (rint in the default rounding mode), addps zy, then max lo / min hi
// (equal to the scalar selects for these non-NaN values: a clamp value or a
// signed zero converts to the same integer), cvttps2dq, narrowed to Q. Lanes
// outside `m` are not stored.
template <class Q>
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline void store_requant16(
    __m512i acc, __m512 scale, __m512 zy, __m512 lo, __m512 hi, __mmask16 m, Q* out) {
  const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), scale);
  if constexpr (std::is_same_v<Q, float>) {
    _mm512_mask_storeu_ps(out, m, x);
  } else {
    const __m512 v = _mm512_add_ps(_mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zy);
    const __m512i q = _mm512_cvttps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi));
    if constexpr (sizeof(Q) == 1) {
      __m128i b = _mm512_cvtepi32_epi8(q);
      __asm__("" : "+v"(b));  // narrowed in a register, then stored: vpmovdb to memory is slow on AMD
      _mm_mask_storeu_epi8(out, m, b);
    } else {
      _mm512_mask_storeu_epi32(out, m, q);
    }
  }
}
#endif

// True when every activation code, as the kernels see it (uint8; int8 codes
// with the sign bit flipped), is below 128, so a needs_a7 kernel is exact.
// n bytes from x.
bool activations_below_128(const void* x, bool x_signed, int64_t n);

}  // namespace lucid::kernels
