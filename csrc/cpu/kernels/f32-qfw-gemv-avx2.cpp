// Float-coded weight GEMV, AVX2 + FMA + F16C: the 16 lanes of qfw-gemv.h
// as two ymm halves (lanes 0-7, 8-15), each step of the arithmetic done on
// both. FP4 codes: vpermps reads an index's low 3 bits, so a nibble's
// magnitude comes from an 8-float table and its sign bit (bit 3, or 7 for
// the high nibble) is shifted to bit 31 and XORed in. FP8 codes: as the
// AVX-512 kernel, shifted into half precision and widened with vcvtph2ps.
// Affine codes widen (vpmovzxbd) and convert (vcvtdq2ps) to exact floats.
#include "cpu/kernels/qfw-gemv.h"
#if defined(LUCID_QFW_X86)
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "cpu/kernels/vquant-isa.h"

LUCID_ISA_BEGIN("avx2,fma,f16c")
namespace lucid::kernels {

namespace {

struct V16 {
  __m256 lo, hi;  // lanes 0-7, 8-15
};

struct Fp4 {
  __m256 mag;  // |e2m1(c)| for c = 0..7
  inline void half(__m256i u, __m256& a, __m256& c) const {
    const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)));
    a = _mm256_xor_ps(_mm256_permutevar8x32_ps(mag, u),
                      _mm256_and_ps(_mm256_castsi256_ps(_mm256_slli_epi32(u, 28)), sign));
    c = _mm256_xor_ps(_mm256_permutevar8x32_ps(mag, _mm256_srli_epi32(u, 4)),
                      _mm256_and_ps(_mm256_castsi256_ps(_mm256_slli_epi32(u, 24)), sign));
  }
  inline void decode(const uint8_t* wb, V16& a, V16& c) const {
    half(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(wb))), a.lo, c.lo);
    half(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(wb + 8))), a.hi, c.hi);
  }
};

template <bool E4M3>
struct Fp8 {
  __m128i nan0 = _mm_setzero_si128(), nan1 = _mm_setzero_si128();
  inline __m256i halves(__m128i raw) const {
    __m256i h = _mm256_slli_epi16(_mm256_cvtepu8_epi16(raw), 8);
    if (E4M3) h = _mm256_and_si256(_mm256_srai_epi16(h, 1), _mm256_set1_epi16(static_cast<short>(0xbf80)));
    return h;
  }
  inline void decode(const uint8_t* wb, V16& a, V16& c) {
    const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb));
    const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 16));
    if (E4M3) {  // NaN codes: all 7 magnitude bits set (see the AVX-512 kernel)
      const __m128i top = _mm_set1_epi8(static_cast<char>(0x80));
      nan0 = _mm_max_epu8(nan0, _mm_or_si128(r0, top));
      nan1 = _mm_max_epu8(nan1, _mm_or_si128(r1, top));
    }
    const __m256i h0 = halves(r0), h1 = halves(r1);
    a.lo = _mm256_cvtph_ps(_mm256_castsi256_si128(h0));
    a.hi = _mm256_cvtph_ps(_mm256_extracti128_si256(h0, 1));
    c.lo = _mm256_cvtph_ps(_mm256_castsi256_si128(h1));
    c.hi = _mm256_cvtph_ps(_mm256_extracti128_si256(h1, 1));
  }
  bool saw_nan() const {
    if (!E4M3) return false;
    const __m128i ff = _mm_set1_epi8(static_cast<char>(0xff));
    return _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(nan0, ff), _mm_cmpeq_epi8(nan1, ff))) != 0;
  }
};

// MLX's affine codes, 4 bits (the FP4 layout) or 8 bits (the FP8 layout).
struct Aff4 {
  inline void half(const uint8_t* p, __m256& a, __m256& c) const {
    const __m256i u = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    a = _mm256_cvtepi32_ps(_mm256_and_si256(u, _mm256_set1_epi32(15)));
    c = _mm256_cvtepi32_ps(_mm256_srli_epi32(u, 4));
  }
  inline void decode(const uint8_t* wb, V16& a, V16& c) const {
    half(wb, a.lo, c.lo);
    half(wb + 8, a.hi, c.hi);
  }
};

struct Aff8 {
  static inline __m256 eight(const uint8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  inline void decode(const uint8_t* wb, V16& a, V16& c) const {
    a.lo = eight(wb), a.hi = eight(wb + 8), c.lo = eight(wb + 16), c.hi = eight(wb + 24);
  }
};

template <class Dec>
constexpr bool kHasNan = std::is_same_v<Dec, Fp8<true>> || std::is_same_v<Dec, Fp8<false>>;

// The tree of qfw-gemv.h over 16 lanes held as two halves.
inline float tree(__m256 lo, __m256 hi) {
  const __m256 h8 = _mm256_add_ps(lo, hi);
  const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  return _mm_cvtss_f32(_mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1)));
}

// The affine biases' term of row n: tree(v), v[l] = sum over j of b[16 j + l] X[16 j + l].
inline float bias_term(const float* b, const float* X, size_t groups) {
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  alignas(32) float tail[16];
  for (size_t g = 0; g < groups; g += 16) {
    const float* bg = b + g;
    if (groups - g < 16) {  // zeros past the last group
      for (size_t l = 0; l < 16; ++l) tail[l] = g + l < groups ? bg[l] : 0.0f;
      bg = tail;
    }
    lo = _mm256_fmadd_ps(_mm256_loadu_ps(bg), _mm256_loadu_ps(X + g), lo);
    hi = _mm256_fmadd_ps(_mm256_loadu_ps(bg + 8), _mm256_loadu_ps(X + g + 8), hi);
  }
  return tree(lo, hi);
}

enum class Scale { Row, Group32, Group16, Affine };

template <Scale S, class Dec>
void rows_loop(Dec dec, QfwFormat f, size_t K, size_t rows, const float* xp, const uint8_t* w, const float* s,
               size_t s_stride, const uint8_t* sc, size_t G, const float* gb, const float* dv, const float* bias,
               float* y) {
  const bool nib = qfw_nibbles(f);
  const size_t rb = qfw_row_bytes(f, K), blocks = qfw_padded(K) / 32;
  const size_t full = nib ? blocks : K / 32;
  const size_t bb = nib ? 16 : 32;
  const size_t groups = S == Scale::Row ? 0 : K / qfw_group(f, G);
  const unsigned gshift = S == Scale::Affine ? static_cast<unsigned>(__builtin_ctzll(G / 32)) : 0;  // 32 i / G
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * rb;
    const uint8_t* scn = sc + n * groups;
    const float* sn = S == Scale::Affine ? s + n * s_stride : nullptr;
    Dec d = dec;
    V16 acc[4];
    for (auto& v : acc) v.lo = v.hi = _mm256_setzero_ps();
    auto block = [&](size_t i, const uint8_t* wb, V16& ac) {
      V16 a, c;
      d.decode(wb, a, c);
      const float* xb = xp + 32 * i;
      const __m256 t0 = _mm256_fmadd_ps(c.lo, _mm256_loadu_ps(xb + 16), _mm256_mul_ps(a.lo, _mm256_loadu_ps(xb)));
      const __m256 t1 = _mm256_fmadd_ps(c.hi, _mm256_loadu_ps(xb + 24), _mm256_mul_ps(a.hi, _mm256_loadu_ps(xb + 8)));
      if constexpr (S == Scale::Row) {
        ac.lo = _mm256_add_ps(ac.lo, t0);
        ac.hi = _mm256_add_ps(ac.hi, t1);
      } else if constexpr (S == Scale::Group32 || S == Scale::Affine) {
        const __m256 dd = _mm256_set1_ps(S == Scale::Affine ? sn[i >> gshift] : dv[scn[i]]);
        ac.lo = _mm256_fmadd_ps(t0, dd, ac.lo);
        ac.hi = _mm256_fmadd_ps(t1, dd, ac.hi);
      } else {
        ac.lo = _mm256_fmadd_ps(t0, _mm256_set1_ps(dv[scn[2 * i]]), ac.lo);
        ac.hi = _mm256_fmadd_ps(t1, _mm256_set1_ps(dv[scn[2 * i + 1]]), ac.hi);
      }
    };
    size_t i = 0;
    for (; i + 4 <= full; i += 4) {
      block(i, wn + bb * i, acc[0]);
      block(i + 1, wn + bb * (i + 1), acc[1]);
      block(i + 2, wn + bb * (i + 2), acc[2]);
      block(i + 3, wn + bb * (i + 3), acc[3]);
    }
    alignas(32) uint8_t buf[32];
    for (; i < blocks; ++i) {
      const uint8_t* wb = wn + bb * i;
      if (i >= full) {
        std::memset(buf, 0, sizeof buf);
        std::memcpy(buf, wb, K - 32 * i);
        wb = buf;
      }
      block(i, wb, acc[i & 3]);
    }
    const __m256 rlo = _mm256_add_ps(_mm256_add_ps(acc[0].lo, acc[1].lo), _mm256_add_ps(acc[2].lo, acc[3].lo));
    const __m256 rhi = _mm256_add_ps(_mm256_add_ps(acc[0].hi, acc[1].hi), _mm256_add_ps(acc[2].hi, acc[3].hi));
    float u = tree(rlo, rhi);
    if (qfw_e4m3_elements(f)) u = u * 256.0f;
    if constexpr (S == Scale::Row) u = u * s[n * s_stride];
    if constexpr (S == Scale::Affine) u = u + bias_term(gb + n * s_stride, xp + qfw_padded(K), groups);
    if constexpr (kHasNan<Dec>) {
      if (d.saw_nan()) {
        const uint32_t qnan = 0x7fc00000u;
        std::memcpy(&y[n], &qnan, 4);
        continue;
      }
    }
    y[n] = bias ? u + bias[n] : u;
  }
}

}  // namespace

// 16 ymm accumulators for one activation row leave no room for a second.
void f32_qfw_gemv_avx2(LUCID_QFW_GEMV_ARGS) {
  if (M != 1) {
    const size_t xl = qfw_xp_len(f, K, G);
    for (size_t m = 0; m < M; ++m)
      f32_qfw_gemv_avx2(f, K, rows, xp + m * xl, w, s, s_stride, sc, G, gb, bias, y + m * ldy, 1, ldy);
    return;
  }
  const QfwTables& T = qfw_tables();
  float mag[8];
  for (int c = 0; c < 8; ++c) mag[c] = T.e2m1[c];
  switch (f) {
    case QfwFormat::E4M3Row:
      return rows_loop<Scale::Row>(Fp8<true>{}, f, K, rows, xp, w, s, s_stride, sc, G, gb, nullptr, bias, y);
    case QfwFormat::E5M2Row:
      return rows_loop<Scale::Row>(Fp8<false>{}, f, K, rows, xp, w, s, s_stride, sc, G, gb, nullptr, bias, y);
    case QfwFormat::Mxfp8:
      return rows_loop<Scale::Group32>(Fp8<true>{}, f, K, rows, xp, w, s, s_stride, sc, G, gb, T.e8m0, bias, y);
    case QfwFormat::Mxfp4:
      return rows_loop<Scale::Group32>(Fp4{_mm256_loadu_ps(mag)}, f, K, rows, xp, w, s, s_stride, sc, G, gb, T.e8m0,
                                       bias, y);
    case QfwFormat::Nvfp4:
      return rows_loop<Scale::Group16>(Fp4{_mm256_loadu_ps(mag)}, f, K, rows, xp, w, s, s_stride, sc, G, gb,
                                       T.e4m3_scale, bias, y);
    case QfwFormat::Affine4:
      return rows_loop<Scale::Affine>(Aff4{}, f, K, rows, xp, w, s, s_stride, sc, G, gb, nullptr, bias, y);
    case QfwFormat::Affine8:
      return rows_loop<Scale::Affine>(Aff8{}, f, K, rows, xp, w, s, s_stride, sc, G, gb, nullptr, bias, y);
  }
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
