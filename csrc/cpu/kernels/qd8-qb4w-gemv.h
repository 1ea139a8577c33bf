// int4 weight-only GEMV with dynamically quantized int8 activations ("qd8" as
// in XNNPACK: one symmetric int8 scale per activation row; "qb4w": int4
// weights with per-group scales and zero points along K), float32 output.
// docs/numerics.md, "int4 weight-only linear with int8 activations".
//
// Weights are as pack_int4 stores them along K: byte j of a row holds
// k = 2j (low nibble) and k = 2j + 1 (high nibble). The activation codes are
// laid out once per row (qd8_qb4w_prepare_x) so that the nibbles are used in
// place: each chunk of 64 k (32 weight bytes) holds first the codes of the
// 32 low nibbles (k = 2j), then those of the 32 high nibbles (k = 2j + 1):
//   xp[64 c + j] = xq[64 c + 2 j],  xp[64 c + 32 + j] = xq[64 c + 2 j + 1]  (j < 32)
// A trailing chunk of 32 k (K % 64 == 32) keeps the same positions (j < 16),
// so xp holds round_up(K, 64) codes (the unused ones 0). The inner loop is
// then load, and / shift, multiply-add: AVX2 vpmaddubsw (unsigned nibble x
// signed code; pair sums <= 2 * 15 * 127, never saturating), NEON sdot.
//
// Per output n and group g the kernels compute the exact integer
//   A = sum_k xq[k] * nib[k] - z'[g] * sx[g]       (int32; sx[g] = sum of xq over g)
// where nib is the stored nibble with `flip` applied (0x88 turns qint4 codes
// into [0, 15]; z' = z + 8 then), so A = sum xq (q - z) exactly. Only the
// float steps have an order, and every kernel follows it lane by lane:
//   u = +0;  u = fl(u + fl(float(A_g) * s[g])) for g = 0, 1, ...;  y = fl(u * sa);  y = fl(y + bias)
// so scalar, AVX2 and NEON agree bit for bit.
#pragma once
#include <cstddef>
#include <cstdint>

namespace lucid::kernels {

// y[n] for n in [0, rows): w is rows x K/2 bytes, s is rows x K/G, zq is
// rows x K/G (z' values) or null (every z' = 8: qint4 without zero points),
// bias (nullable) has `rows` entries; xp, sx come from qd8_qb4w_prepare_x,
// sa is the row's activation scale. G is a multiple of 32.
#define LUCID_QD8_QB4W_GEMV_ARGS                                                                              \
  size_t K, size_t G, size_t rows, const int8_t *xp, const int32_t *sx, float sa, const uint8_t *w,          \
      const float *s, const int32_t *zq, uint8_t flip, const float *bias, float *y
using qd8_qb4w_gemv_fn = void (*)(LUCID_QD8_QB4W_GEMV_ARGS);

// Codes per prepared row: K rounded up to a multiple of 64.
inline size_t qd8_qb4w_padded(size_t K) { return (K + 63) / 64 * 64; }

// xq: K codes in k order; xp: qd8_qb4w_padded(K) codes; sx: K / G sums.
inline void qd8_qb4w_prepare_x(size_t K, size_t G, const int8_t* xq, int8_t* xp, int32_t* sx) {
  const size_t Kp = qd8_qb4w_padded(K);
  for (size_t i = K; i < Kp; ++i) xp[i] = 0;
  for (size_t k = 0; k < K; k += 2) {
    size_t c = k / 64 * 64, j = (k % 64) / 2;
    xp[c + j] = xq[k];
    xp[c + 32 + j] = xq[k + 1];
  }
  for (size_t g = 0; g < K / G; ++g) {
    int32_t acc = 0;
    for (size_t k = g * G; k < (g + 1) * G; ++k) acc += xq[k];
    sx[g] = acc;
  }
}

void qd8_qb4w_gemv_scalar(LUCID_QD8_QB4W_GEMV_ARGS);
#if defined(__x86_64__) || defined(_M_X64)
void qd8_qb4w_gemv_avx2(LUCID_QD8_QB4W_GEMV_ARGS);
#endif
#if defined(__aarch64__)
void qd8_qb4w_gemv_neondot(LUCID_QD8_QB4W_GEMV_ARGS);  // needs FEAT_DotProd (cpu_has_neon_dot)
#endif

// The fastest kernel this CPU runs (chosen once), and its name.
qd8_qb4w_gemv_fn qd8_qb4w_gemv_best(const char** isa = nullptr);

}  // namespace lucid::kernels
