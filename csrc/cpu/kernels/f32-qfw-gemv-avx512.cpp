// Float-coded weight GEMV, AVX-512F/BW: one zmm holds the 16 lanes of
// qfw-gemv.h. FP4 codes: one vpmovzxbd of a block's 16 bytes, the nibbles
// (bits 3..0, and 7..4 after a shift) index a 16-float table with vpermps,
// which reads only an index's low 4 bits. FP8 codes: one vpmovzxbw of a
// block's 32 bytes puts each code in a 16-bit lane; shifted into half
// precision bits (E5M2 is the top byte of a half; E4M3's exponent and
// mantissa move one bit down), vcvtph2ps gives ev(c) exactly. Four
// accumulators in flight hide the FMA latency of the block-scale steps; up
// to four activation rows share each decoded FP8 block. 8-bit affine codes
// widen (vpmovzxbd) and convert (vcvtdq2ps) to exact floats; 4-bit ones
// index the table 0..15 as FP4 codes index theirs.
#include "cpu/kernels/qfw-gemv.h"
#if defined(LUCID_QFW_X86)
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "cpu/kernels/prefetch.h"
#include "cpu/kernels/vquant-isa.h"

LUCID_ISA_BEGIN("avx512f,avx512bw,avx2,fma,f16c")
#include "cpu/kernels/tree16-avx512.h"
namespace lucid::kernels {

namespace {

struct Fp4 {
  __m512 tab;
  inline void decode(const uint8_t* wb, __m512& a, __m512& c) const {
    const __m512i u = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb)));
    a = _mm512_permutexvar_ps(u, tab);
    c = _mm512_permutexvar_ps(_mm512_srli_epi32(u, 4), tab);
  }
};

template <bool E4M3>
struct Fp8 {
  __m256i nan = _mm256_setzero_si256();
  inline void decode(const uint8_t* wb, __m512& a, __m512& c) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb));
    __m512i h = _mm512_slli_epi16(_mm512_cvtepu8_epi16(raw), 8);
    if (E4M3) {
      h = _mm512_and_si512(_mm512_srai_epi16(h, 1), _mm512_set1_epi16(static_cast<short>(0xbf80)));
      // NaN codes are the bytes with all 7 magnitude bits set: OR in the
      // sign bit and keep the running byte maximum; 0xFF means one was seen.
      nan = _mm256_max_epu8(nan, _mm256_or_si256(raw, _mm256_set1_epi8(static_cast<char>(0x80))));
    }
    a = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
    c = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1));
  }
  bool saw_nan() const {
    if (!E4M3) return false;
    return _mm256_movemask_epi8(_mm256_cmpeq_epi8(nan, _mm256_set1_epi8(static_cast<char>(0xff)))) != 0;
  }
};

// MLX's affine codes, 4 bits (the FP4 layout) or 8 bits (the FP8 layout).
// The nibbles index the table 0..15 as FP4's index theirs: vpermps in place
// of a mask and vcvtdq2ps (the same exact values), which keeps the decode off
// the port the multiply-adds need.
struct Aff4 {
  __m512 tab = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  inline void decode(const uint8_t* wb, __m512& a, __m512& c) const {
    const __m512i u = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb)));
    a = _mm512_permutexvar_ps(u, tab);
    c = _mm512_permutexvar_ps(_mm512_srli_epi32(u, 4), tab);
  }
};

struct Aff8 {
  inline void decode(const uint8_t* wb, __m512& a, __m512& c) const {
    a = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb))));
    c = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 16))));
  }
};

template <class Dec>
constexpr bool kHasNan = std::is_same_v<Dec, Fp8<true>> || std::is_same_v<Dec, Fp8<false>>;

// The affine biases' term of row n: tree16(v), v[l] = sum over j of b[16 j + l] X[16 j + l].
inline float bias_term(const float* b, const float* X, size_t groups) {
  __m512 v = _mm512_setzero_ps();
  for (size_t g = 0; g < groups; g += 16) {
    const __mmask16 live = groups - g >= 16 ? __mmask16(0xffff) : __mmask16((1u << (groups - g)) - 1);
    v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(live, b + g), _mm512_loadu_ps(X + g), v);
  }
  return tree16(v);
}

enum class Scale { Row, Group32, Group16, Affine };

// MR activation rows at a time: each block is decoded once and multiplied
// into the MR rows' accumulators (4 x MR zmm).
template <Scale S, int MR, class Dec>
void rows_loop(Dec dec, QfwFormat f, size_t K, size_t rows, const float* xp, const uint8_t* w, const float* s,
               size_t s_stride, const uint8_t* sc, size_t G, const float* gb, const float* dv, const float* bias,
               float* y, size_t ldy) {
  const bool nib = qfw_nibbles(f);
  const size_t rb = qfw_row_bytes(f, K), Kp = qfw_padded(K), xl = qfw_xp_len(f, K, G), blocks = Kp / 32;
  const size_t full = nib ? blocks : K / 32;  // blocks read in place (an fp8 row's partial block is copied)
  const size_t bb = nib ? 16 : 32;             // bytes per block
  const size_t groups = S == Scale::Row ? 0 : K / qfw_group(f, G);
  // Block i's affine group is 32 i / G = i >> gshift (G a power of two from
  // 32): a shift, where the division cost as much as the block's arithmetic.
  const unsigned gshift = S == Scale::Affine ? static_cast<unsigned>(__builtin_ctzll(G / 32)) : 0;
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * rb;
    const uint8_t* scn = sc + n * groups;
    const float* sn = S == Scale::Affine ? s + n * s_stride : nullptr;
    Dec d = dec;
    __m512 acc[MR][4];
    for (int m = 0; m < MR; ++m)
      for (int j = 0; j < 4; ++j) acc[m][j] = _mm512_setzero_ps();
    auto block = [&](size_t i, const uint8_t* wb, int j) {
      __m512 a, c;
      d.decode(wb, a, c);
      __m512 dd;
      if constexpr (S == Scale::Group32) dd = _mm512_set1_ps(dv[scn[i]]);
      else if constexpr (S == Scale::Affine) dd = _mm512_set1_ps(sn[i >> gshift]);
      else if constexpr (S == Scale::Group16)
        dd = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_set1_ps(dv[scn[2 * i]])),
                                                 _mm256_castps_pd(_mm256_set1_ps(dv[scn[2 * i + 1]])), 1));
      for (int m = 0; m < MR; ++m) {
        const float* xb = xp + m * xl + 32 * i;
        const __m512 t = _mm512_fmadd_ps(c, _mm512_loadu_ps(xb + 16), _mm512_mul_ps(a, _mm512_loadu_ps(xb)));
        if constexpr (S == Scale::Row) acc[m][j] = _mm512_add_ps(acc[m][j], t);
        else acc[m][j] = _mm512_fmadd_ps(t, dd, acc[m][j]);
      }
    };
    size_t i = 0;
    for (; i + 4 <= full; i += 4) {
      prefetch_ahead(wn + bb * i, 4 * bb);  // the weights stream from DRAM (cpu/kernels/prefetch.h)
      block(i, wn + bb * i, 0);
      block(i + 1, wn + bb * (i + 1), 1);
      block(i + 2, wn + bb * (i + 2), 2);
      block(i + 3, wn + bb * (i + 3), 3);
    }
    alignas(32) uint8_t buf[32];
    for (; i < blocks; ++i) {
      const uint8_t* wb = wn + bb * i;
      if (i >= full) {
        std::memset(buf, 0, sizeof buf);
        std::memcpy(buf, wb, K - 32 * i);
        wb = buf;
      }
      block(i, wb, static_cast<int>(i & 3));
    }
    bool nan = false;
    if constexpr (kHasNan<Dec>) nan = d.saw_nan();
    for (int m = 0; m < MR; ++m) {
      float* ym = y + m * ldy;
      if (nan) {
        const uint32_t qnan = 0x7fc00000u;
        std::memcpy(&ym[n], &qnan, 4);
        continue;
      }
      const __m512 r = _mm512_add_ps(_mm512_add_ps(acc[m][0], acc[m][1]), _mm512_add_ps(acc[m][2], acc[m][3]));
      float u = tree16(r);
      if (qfw_e4m3_elements(f)) u = u * 256.0f;
      if constexpr (S == Scale::Row) u = u * s[n * s_stride];
      if constexpr (S == Scale::Affine) u = u + bias_term(gb + n * s_stride, xp + m * xl + Kp, groups);
      ym[n] = bias ? u + bias[n] : u;
    }
  }
}

template <Scale S, class Dec>
void all_rows(Dec dec, QfwFormat f, size_t K, size_t rows, const float* xp, const uint8_t* w, const float* s,
              size_t s_stride, const uint8_t* sc, size_t G, const float* gb, const float* dv, const float* bias,
              float* y, size_t M, size_t ldy) {
  const size_t xl = qfw_xp_len(f, K, G);
  for (size_t m = 0; m < M;) {
    const size_t left = M - m;
    const float* xm = xp + m * xl;
    float* ym = y + m * ldy;
    // 4-bit decoding is cheaper than the arithmetic it feeds, and sharing it
    // across rows measured slower (register pressure); 8-bit codes' is not.
    if (std::is_same_v<Dec, Fp4> || std::is_same_v<Dec, Aff4>)
      rows_loop<S, 1>(dec, f, K, rows, xm, w, s, s_stride, sc, G, gb, dv, bias, ym, ldy), m += 1;
    else if (left >= 4) rows_loop<S, 4>(dec, f, K, rows, xm, w, s, s_stride, sc, G, gb, dv, bias, ym, ldy), m += 4;
    else if (left >= 2) rows_loop<S, 2>(dec, f, K, rows, xm, w, s, s_stride, sc, G, gb, dv, bias, ym, ldy), m += 2;
    else rows_loop<S, 1>(dec, f, K, rows, xm, w, s, s_stride, sc, G, gb, dv, bias, ym, ldy), m += 1;
  }
}

void dispatch(LUCID_QFW_GEMV_ARGS) {
  const QfwTables& T = qfw_tables();
  switch (f) {
    case QfwFormat::E4M3Row:
      return all_rows<Scale::Row>(Fp8<true>{}, f, K, rows, xp, w, s, s_stride, sc, G, gb, nullptr, bias, y, M, ldy);
    case QfwFormat::E5M2Row:
      return all_rows<Scale::Row>(Fp8<false>{}, f, K, rows, xp, w, s, s_stride, sc, G, gb, nullptr, bias, y, M, ldy);
    case QfwFormat::Mxfp8:
      return all_rows<Scale::Group32>(Fp8<true>{}, f, K, rows, xp, w, s, s_stride, sc, G, gb, T.e8m0, bias, y, M,
                                      ldy);
    case QfwFormat::Mxfp4:
      return all_rows<Scale::Group32>(Fp4{_mm512_loadu_ps(T.e2m1)}, f, K, rows, xp, w, s, s_stride, sc, G, gb,
                                      T.e8m0, bias, y, M, ldy);
    case QfwFormat::Nvfp4:
      return all_rows<Scale::Group16>(Fp4{_mm512_loadu_ps(T.e2m1)}, f, K, rows, xp, w, s, s_stride, sc, G, gb,
                                      T.e4m3_scale, bias, y, M, ldy);
    case QfwFormat::Affine4:
      return all_rows<Scale::Affine>(Aff4{}, f, K, rows, xp, w, s, s_stride, sc, G, gb, nullptr, bias, y, M, ldy);
    case QfwFormat::Affine8:
      return all_rows<Scale::Affine>(Aff8{}, f, K, rows, xp, w, s, s_stride, sc, G, gb, nullptr, bias, y, M, ldy);
  }
}
}  // namespace

void f32_qfw_gemv_avx512(LUCID_QFW_GEMV_ARGS) {
  dispatch(f, K, rows, xp, w, s, s_stride, sc, G, gb, bias, y, M, ldy);
  // The row loops take their decoder (a zmm table) by value, so the compiler
  // leaves them without a vzeroupper and tail-calls them: without this one the
  // caller's SSE code (libm's erff, say) ran with the upper state dirty, 30x
  // slower on the Xeon guest (a GELU after an mxfp4 layer: 1.0-1.4 ms, not 36 us).
  _mm256_zeroupper();
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
