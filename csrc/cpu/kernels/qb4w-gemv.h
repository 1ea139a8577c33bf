// int4 weight-only GEMV microkernels (f32 activations x blockwise int4
// weights, "qb4w" as in XNNPACK: per-group scales and zero points along K).
//
// Weights are as pack_int4 stores them along K: byte j of a row holds
// k = 2j in its low nibble and k = 2j + 1 in its high nibble. The kernel
// never unpacks them to memory. So that the nibbles are used in place, the
// activation row is prepared once per call (f32_qb4w_prepare_x): each block
// of 32 k holds four parts of 8 (part p: bytes 8 (p >> 1) .. + 8, the low
// nibbles when p is even), stored in the order p0, p2, p1, p3, so that one
// 16-lane load reads the x of both low-nibble parts; and Sx[g], the sum of x
// over group g in k order. The zero point is folded out:
// sum x (q - z) = sum x q - z Sx.
//
// Arithmetic (docs/numerics.md, "int4 weight-only linear"), identical in the
// scalar reference and every vector kernel, so they agree bit for bit:
//   per group g of G weights (G a multiple of 32), 4 accumulators of 8 lanes:
//     block b, part p, lane l (xp offset o(p) = 8 (p >> 1) + 16 (p & 1))
//       acc[p][l] = fl(acc[p][l] + fl(xp[b + o(p) + l] * float(nib)))
//     row[l] = fl(row[l] + fl(fl(fl(acc[0][l] + acc[1][l]) + fl(acc[2][l] + acc[3][l])) * s[g]))
//     corr   = fl(corr + fl(fl(float(z') * Sx[g]) * s[g]))
//   y = fl(fl(fl(fl(row0 + row4) + fl(row2 + row6)) + fl(fl(row1 + row5) + fl(row3 + row7))) - corr)
//   y = fl(y + bias) when there is a bias.
// nib is the stored nibble with `flip` applied (0x88 turns qint4 codes into
// unsigned ones; z' = z + 8 then), so q - z = nib - z' exactly.
#pragma once
#include <cstddef>
#include <cstdint>

namespace lucid::kernels {

// y[n] for n in [0, rows): w is rows x K/2 bytes, s and zq are rows x K/G,
// bias (nullable) has `rows` entries; xp, sx come from f32_qb4w_prepare_x.
#define LUCID_QB4W_GEMV_ARGS                                                                                   \
  size_t K, size_t G, size_t rows, const float *xp, const float *sx, const uint8_t *w, const float *s,        \
      const int32_t *zq, uint8_t flip, const float *bias, float *y
using qb4w_gemv_fn = void (*)(LUCID_QB4W_GEMV_ARGS);

// xp: K floats (the permuted row), sx: K / G group sums (summed in k order).
inline void f32_qb4w_prepare_x(size_t K, size_t G, const float* x, float* xp, float* sx) {
  for (size_t b = 0; b + 32 <= K; b += 32)
    for (size_t half = 0; half < 2; ++half)
      for (size_t l = 0; l < 8; ++l) {
        size_t k = b + 16 * half + 2 * l;  // low nibble of byte 8 * half + l: part 2 * half
        xp[b + 8 * half + l] = x[k];
        xp[b + 16 + 8 * half + l] = x[k + 1];  // its high nibble: part 2 * half + 1
      }
  for (size_t g = 0; g < K / G; ++g) {
    float acc = 0.0f;
    for (size_t k = g * G; k < (g + 1) * G; ++k) acc = acc + x[k];
    sx[g] = acc;
  }
}

void f32_qb4w_gemv_scalar(LUCID_QB4W_GEMV_ARGS);
#if defined(__x86_64__) || defined(_M_X64)
void f32_qb4w_gemv_avx2(LUCID_QB4W_GEMV_ARGS);
void f32_qb4w_gemv_avx512(LUCID_QB4W_GEMV_ARGS);
#endif
#if defined(__aarch64__)
void f32_qb4w_gemv_neon(LUCID_QB4W_GEMV_ARGS);
#endif

// The fastest kernel this CPU runs (chosen once), and its name.
qb4w_gemv_fn f32_qb4w_gemv_best(const char** isa = nullptr);

}  // namespace lucid::kernels
