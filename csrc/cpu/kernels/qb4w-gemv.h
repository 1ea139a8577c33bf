// int4 weight-only GEMV microkernels (f32 activations x blockwise int4
// weights, "qb4w" as in XNNPACK: per-group scales and zero points along K).
//
// Weights are as pack_int4 stores them along K: byte j of a row holds
// k = 2j in its low nibble and k = 2j + 1 in its high nibble. The kernel
// never unpacks them to memory. So that the nibbles are used in place, the
// activation row is prepared once per call (f32_qb4w_prepare_x): in each
// block of 32 k (16 bytes), 16 lanes l = 0..15, xp[b + l] = x[b + 2l] (the
// low nibble of byte l) and xp[b + 16 + l] = x[b + 2l + 1] (its high
// nibble); and Sx[g], the sum of x over group g in k order. The zero point
// is folded out: sum x (q - z) = sum x q - z Sx.
//
// Arithmetic (docs/numerics.md, "int4 weight-only linear"), identical in the
// scalar reference and every vector kernel, so they agree bit for bit
// (fma rounds once, as std::fma; + and * round once each):
//   per group g of G weights (G a multiple of 32), per lane l:
//     A[l] = C[l] = 0; for each block b of the group:
//       A[l] = fma(xp[b + l], float(lo nibble of byte l), A[l])
//       C[l] = fma(xp[b + 16 + l], float(hi nibble of byte l), C[l])
//     row[l] = fma(fl(A[l] + C[l]), s[g], row[l])
//   corr = fl(corr + fl(fl(float(z'[g]) * Sx[g]) * s[g])), g = 0, 1, .. in order
//   tree(row): h8[l] = row[l] + row[l + 8], h4[l] = h8[l] + h8[l + 4],
//              h2[l] = h4[l] + h4[l + 2], then h2[0] + h2[1]
//   y = fl(tree(row) - corr), then y = fl(y + bias) when there is a bias.
// One multiply-add per weight and one conversion per weight: the vector
// kernels are limited by those two, not by a fixed 8-lane order.
// nib is the stored nibble with `flip` applied (0x88 turns qint4 codes into
// unsigned ones; z' = z + 8 then), so q - z = nib - z' exactly.
#pragma once
#include <cstddef>
#include <cstdint>

namespace lucid::kernels {

// y[n] for n in [0, rows): w is rows x K/2 bytes, s and zq are rows x K/G,
// bias (nullable) has `rows` entries; xp, sx come from f32_qb4w_prepare_x.
// zq may be null: every z' is then 8 (qint4 codes without zero points, flip
// 0x88), so symmetric weights need no per-call array of eights.
#define LUCID_QB4W_GEMV_ARGS                                                                                   \
  size_t K, size_t G, size_t rows, const float *xp, const float *sx, const uint8_t *w, const float *s,        \
      const int32_t *zq, uint8_t flip, const float *bias, float *y
using qb4w_gemv_fn = void (*)(LUCID_QB4W_GEMV_ARGS);

// xp: K floats (the permuted row), sx: K / G group sums (summed in k order).
inline void f32_qb4w_prepare_x(size_t K, size_t G, const float* x, float* xp, float* sx) {
  for (size_t b = 0; b + 32 <= K; b += 32)
    for (size_t l = 0; l < 16; ++l) {
      xp[b + l] = x[b + 2 * l];
      xp[b + 16 + l] = x[b + 2 * l + 1];
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
