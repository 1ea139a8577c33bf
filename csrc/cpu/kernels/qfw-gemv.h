// Weight-only GEMV microkernels for float-coded weights ("qfw": quantized
// float weights): FP8 codes with one float scale per row (E4M3FN or E5M2),
// MLX's block formats (mxfp8: E4M3 codes, E8M0 scale per 32; mxfp4: E2M1
// codes, E8M0 scale per 32; nvfp4: E2M1 codes, E4M3 scale per 16), and MLX's
// group-wise affine format at 4 and 8 bits (unsigned integer codes q, a
// float scale and bias per group of G = 32, 64 or 128: value scale * q + bias).
// y[n] = sum_k x[k] * value(w[n, k]) (+ bias[n]) for one activation row,
// reading the packed codes directly; the decoding is a table lookup (the
// scalar kernel, every scale) or a few integer operations (vector kernels).
//
// Lanes. Every kernel works on blocks of 32 codes as 16 "lanes" l = 0..15:
//   8-bit codes: lane l holds codes b + l (part a) and b + 16 + l (part c)
//   4-bit codes: the block is 16 bytes; lane l holds byte l's low nibble
//                (code b + 2l, part a) and its high nibble (b + 2l + 1, part c)
// xp is the activation row laid out to match (qfw_prepare_x): xp[b + l] is
// part a's activation, xp[b + 16 + l] part c's, zero past K.
//
// Element values. ev(c) is the code's value times 2^-e (affine: ev(q) = q,
// exact in float32), with e = 8 for the
// E4M3 element formats (fp8 E4M3FN, mxfp8) and e = 0 otherwise: E4M3 codes
// shifted into half precision are exactly decode(c) * 2^-8, and the scale
// 2^e is applied once at the end, where it is exact. The NaN codes of
// E4M3FN (0x7F, 0xFF) do not come out of that shift as NaN: a row holding
// one gives NaN (0x7fc00000) whatever x is, as decode(c) * x would.
//
// Arithmetic (docs/numerics.md, "Float-coded weight-only linear"), identical
// in the scalar kernel and every vector kernel, so they agree bit for bit
// (fma = one rounding, as std::fma; + and * round once):
//   per block i (codes [32 i, 32 i + 32)), per lane l:
//     t[l]  = fma(ev(c), xp[32i + 16 + l], ev(a) * xp[32i + l])
//     row scale:   acc[i % 4][l] = acc[i % 4][l] + t[l]
//     block scale: acc[i % 4][l] = fma(t[l], d(i, l), acc[i % 4][l])
//                  d(i, l) = the scale of the group holding the lane's codes:
//                  group i (G = 32), group 2i + (l >= 8) (G = 16), exact;
//                  affine: the float scale of group 32 i / G
//   r[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l])
//   tree(r): h8[l] = r[l] + r[l + 8], h4[l] = h8[l] + h8[l + 4],
//            h2[l] = h4[l] + h4[l + 2], then h2[0] + h2[1]
//   u = tree(r)
//   u = u * 2^e   (exact)
//   row scale: u = u * s[n]    (per tensor: the one scale)
//   affine: the biases' term over the groups' activation sums X[g] (which
//     qfw_prepare_x adds after the activations, zeros to a multiple of 16):
//     v[l] = 0, then for j = 0, 1, ..: v[l] = fma(b[16 j + l], X[16 j + l], v[l])
//     (b = 0 past the last group), u = u + tree(v)
//   y[n] = bias ? u + bias[n] : u
// A row's last, partial block (fp8 with K % 32 != 0) reads zero codes past
// K (value 0) against xp's zeros.
#pragma once
#include <cstddef>
#include <cstdint>

namespace lucid::kernels {

enum class QfwFormat : uint8_t {
  E4M3Row = 0,  // fp8 E4M3FN codes, K bytes a row, float scale per row
  E5M2Row = 1,  // fp8 E5M2 codes, K bytes a row, float scale per row
  Mxfp8 = 2,    // E4M3FN codes, K bytes a row, E8M0 scale per 32
  Mxfp4 = 3,    // E2M1 codes, K / 2 bytes a row, E8M0 scale per 32
  Nvfp4 = 4,    // E2M1 codes, K / 2 bytes a row, E4M3FN scale per 16
  Affine4 = 5,  // 4-bit codes, K / 2 bytes a row, float scale and bias per G
  Affine8 = 6,  // 8-bit codes, K bytes a row, float scale and bias per G
};

inline bool qfw_fp4(QfwFormat f) { return f == QfwFormat::Mxfp4 || f == QfwFormat::Nvfp4; }
inline bool qfw_affine(QfwFormat f) { return f == QfwFormat::Affine4 || f == QfwFormat::Affine8; }
// Codes a nibble each (two per byte: low nibble first) rather than a byte each.
inline bool qfw_nibbles(QfwFormat f) { return qfw_fp4(f) || f == QfwFormat::Affine4; }
inline bool qfw_row_scale(QfwFormat f) { return f == QfwFormat::E4M3Row || f == QfwFormat::E5M2Row; }
inline bool qfw_e4m3_elements(QfwFormat f) { return f == QfwFormat::E4M3Row || f == QfwFormat::Mxfp8; }
// The group of one scale: fixed by the block formats, G for affine.
inline size_t qfw_group(QfwFormat f, size_t G = 0) { return qfw_affine(f) ? G : f == QfwFormat::Nvfp4 ? 16 : 32; }
// Bytes of codes per row of K weights.
inline size_t qfw_row_bytes(QfwFormat f, size_t K) { return qfw_nibbles(f) ? K / 2 : K; }
// K rounded up to whole blocks.
inline size_t qfw_padded(size_t K) { return (K + 31) / 32 * 32; }
// Floats of one prepared activation row: the padded activations, then (affine)
// the K / G group sums padded to a multiple of 16.
inline size_t qfw_xp_len(QfwFormat f, size_t K, size_t G) {
  return qfw_padded(K) + (qfw_affine(f) ? (K / G + 15) / 16 * 16 : 0);
}

// rows outputs y[m * ldy + n], n in [0, rows), for each of M activation rows
// (xp: M rows of qfw_xp_len(f, K, G) floats); the arithmetic of each (m, n)
// is the one above, whichever M. w holds `rows` rows of codes
// (qfw_row_bytes(f, K) bytes each, contiguous); row scale formats read
// s[0, rows) (s_stride 0: the one per-tensor scale s[0]); block formats read
// sc, rows x K / group scale codes; affine reads the float scales s and
// biases gb, rows x K / G each, row n at n * s_stride (= K / G). bias
// (nullable) has `rows` entries. Block and affine formats need K % 32 == 0
// (affine: G in {32, 64, 128} dividing K). Kernels may decode a block once
// for several activation rows.
#define LUCID_QFW_GEMV_ARGS                                                                                      \
  lucid::kernels::QfwFormat f, size_t K, size_t rows, const float *xp, const uint8_t *w, const float *s,          \
      size_t s_stride, const uint8_t *sc, size_t G, const float *gb, const float *bias, float *y, size_t M,     \
      size_t ldy
using qfw_gemv_fn = void (*)(LUCID_QFW_GEMV_ARGS);

// xp (qfw_xp_len(f, K, G) floats) from the activation row x (K floats).
// The affine group sums are plain float32 sums in k order.
inline void qfw_prepare_x(QfwFormat f, size_t K, size_t G, const float* x, float* xp) {
  const size_t Kp = qfw_padded(K);
  if (!qfw_nibbles(f)) {
    for (size_t k = 0; k < K; ++k) xp[k] = x[k];
    for (size_t k = K; k < Kp; ++k) xp[k] = 0.0f;
  } else {
    for (size_t b = 0; b < K; b += 32)  // 4-bit formats: K % 32 == 0
      for (size_t l = 0; l < 16; ++l) {
        xp[b + l] = x[b + 2 * l];
        xp[b + 16 + l] = x[b + 2 * l + 1];
      }
  }
  if (!qfw_affine(f)) return;
  float* X = xp + Kp;
  const size_t groups = K / G, padded = qfw_xp_len(f, K, G) - Kp;
  for (size_t g = 0; g < groups; ++g) {
    float sum = 0.0f;
    for (size_t k = g * G; k < (g + 1) * G; ++k) sum += x[k];
    X[g] = sum;
  }
  for (size_t g = groups; g < padded; ++g) X[g] = 0.0f;
}

// The x86 kernels use F16C and FMA, which the SIMDe test build (AVX-512
// emulated on an AVX2 host, tests/kernels) does not enable: it runs the
// scalar kernel only.
#if (defined(__x86_64__) || defined(_M_X64)) && !defined(LUCID_KERNELS_SIMDE_AVX512)
#define LUCID_QFW_X86 1
#endif

void f32_qfw_gemv_scalar(LUCID_QFW_GEMV_ARGS);
#if defined(LUCID_QFW_X86)
void f32_qfw_gemv_avx2(LUCID_QFW_GEMV_ARGS);    // AVX2 + FMA + F16C
void f32_qfw_gemv_avx512(LUCID_QFW_GEMV_ARGS);  // AVX-512F / BW
#endif

// The fastest kernel this CPU runs (chosen once), and its name.
qfw_gemv_fn f32_qfw_gemv_best(const char** isa = nullptr);

// Exact tables the kernels share: ev(c) of every 8-bit element code (the
// E4M3 ones times 2^-8, as above; NaN codes give the value their shift
// gives, the kernels flag them apart), of every FP4 code, and the scale
// values of E8M0 (2^(c - 127); 0: 2^-127; 0xFF: NaN) and E4M3FN codes.
struct QfwTables {
  float e4m3[256], e5m2[256], e2m1[16], e8m0[256], e4m3_scale[256];
};
const QfwTables& qfw_tables();

}  // namespace lucid::kernels
