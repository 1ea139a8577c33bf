// int4 weight-only GEMV microkernels (f32 activations x blockwise int4
// weights, "qb4w" as in XNNPACK: per-group scales and zero points along K).
//
// Weights are as pack_int4 stores them along K: byte j of a row holds
// k = 2j in its low nibble and k = 2j + 1 in its high nibble. The kernel
// never unpacks them to memory. To use the nibbles in place, the activation
// row is permuted once per call (f32_qb4w_permute_x): in every block of 32,
// the 16 even k first, then the 16 odd k.
//
// Arithmetic (docs/numerics.md, "int4 weight-only linear"), identical in the
// scalar reference and every vector kernel, so they agree bit for bit:
//   per group g of G weights (G a multiple of 32), 4 accumulators of 8 lanes:
//     block b, part p (0: even k 0..14, 1: even 16..30, 2: odd 1..15, 3: odd 17..31)
//       acc[p][l] = fl(acc[p][l] + fl(x[k] * float(nib(k) - z')))
//     gsum[l] = fl(fl(acc[0][l] + acc[1][l]) + fl(acc[2][l] + acc[3][l]))
//     row[l]  = fl(row[l] + fl(gsum[l] * s[g]))
//   y = fl(fl(fl(row0 + row4) + fl(row2 + row6)) + fl(fl(row1 + row5) + fl(row3 + row7)))  (+ bias, one rounding)
// nib is the stored nibble with `flip` applied (0x88 turns qint4 codes into
// unsigned ones; z' = z + 8 then), so q - z = nib - z' exactly.
#pragma once
#include <cstddef>
#include <cstdint>

namespace lucid::kernels {

// y[n] for n in [0, rows): w is rows x K/2 bytes, s and zq are rows x K/G,
// bias (nullable) has `rows` entries; xp is the permuted activation row.
using qb4w_gemv_fn = void (*)(size_t K, size_t G, size_t rows, const float* xp, const uint8_t* w, const float* s,
                              const int32_t* zq, uint8_t flip, const float* bias, float* y);

inline void f32_qb4w_permute_x(size_t K, const float* x, float* xp) {
  for (size_t b = 0; b + 32 <= K; b += 32)
    for (size_t i = 0; i < 16; ++i) xp[b + i] = x[b + 2 * i], xp[b + 16 + i] = x[b + 2 * i + 1];
}

void f32_qb4w_gemv_scalar(size_t K, size_t G, size_t rows, const float* xp, const uint8_t* w, const float* s,
                          const int32_t* zq, uint8_t flip, const float* bias, float* y);
#if defined(__x86_64__) || defined(_M_X64)
void f32_qb4w_gemv_avx2(size_t K, size_t G, size_t rows, const float* xp, const uint8_t* w, const float* s,
                        const int32_t* zq, uint8_t flip, const float* bias, float* y);
#endif
#if defined(__aarch64__)
void f32_qb4w_gemv_neon(size_t K, size_t G, size_t rows, const float* xp, const uint8_t* w, const float* s,
                        const int32_t* zq, uint8_t flip, const float* bias, float* y);
#endif

// The fastest kernel this CPU runs (chosen once), and its name.
qb4w_gemv_fn f32_qb4w_gemv_best(const char** isa = nullptr);

}  // namespace lucid::kernels
