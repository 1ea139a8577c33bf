// Float-coded weight GEMV, AVX-512F/BW: one zmm holds the 16 lanes of
// qfw-gemv.h. FP4 codes: one vpmovzxbd of a block's 16 bytes, the nibbles
// (bits 3..0, and 7..4 after a shift) index a 16-float table with vpermps,
// which reads only an index's low 4 bits. FP8 codes: one vpmovzxbw of a
// block's 32 bytes puts each code in a 16-bit lane; shifted into half
// precision bits (E5M2 is the top byte of a half; E4M3's exponent and
// mantissa move one bit down), vcvtph2ps gives ev(c) exactly. Four
// accumulators in flight hide the FMA latency of the block-scale steps.
#include "cpu/kernels/qfw-gemv.h"
#if defined(LUCID_QFW_X86)
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "cpu/kernels/vquant-isa.h"

LUCID_ISA_BEGIN("avx512f,avx512bw,avx2,fma,f16c")
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

enum class Scale { Row, Group32, Group16 };

template <Scale S, class Dec>
void rows_loop(Dec dec, QfwFormat f, size_t K, size_t rows, const float* xp, const uint8_t* w, const float* s,
               size_t s_stride, const uint8_t* sc, const float* dv, const float* bias, float* y) {
  const bool fp4 = qfw_fp4(f);
  const size_t rb = qfw_row_bytes(f, K), blocks = qfw_padded(K) / 32;
  const size_t full = fp4 ? blocks : K / 32;  // blocks read in place (an fp8 row's partial block is copied)
  const size_t bb = fp4 ? 16 : 32;             // bytes per block
  const size_t groups = S == Scale::Row ? 0 : K / qfw_group(f);
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * rb;
    const uint8_t* scn = sc + n * groups;
    Dec d = dec;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    auto block = [&](size_t i, const uint8_t* wb, __m512& acc) {
      __m512 a, c;
      d.decode(wb, a, c);
      const float* xb = xp + 32 * i;
      const __m512 t = _mm512_fmadd_ps(c, _mm512_loadu_ps(xb + 16), _mm512_mul_ps(a, _mm512_loadu_ps(xb)));
      if constexpr (S == Scale::Row) acc = _mm512_add_ps(acc, t);
      else if constexpr (S == Scale::Group32) acc = _mm512_fmadd_ps(t, _mm512_set1_ps(dv[scn[i]]), acc);
      else {
        const __m512 dd = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_set1_ps(dv[scn[2 * i]])),
                                                               _mm256_castps_pd(_mm256_set1_ps(dv[scn[2 * i + 1]])), 1));
        acc = _mm512_fmadd_ps(t, dd, acc);
      }
    };
    size_t i = 0;
    for (; i + 4 <= full; i += 4) {
      block(i, wn + bb * i, acc0);
      block(i + 1, wn + bb * (i + 1), acc1);
      block(i + 2, wn + bb * (i + 2), acc2);
      block(i + 3, wn + bb * (i + 3), acc3);
    }
    alignas(32) uint8_t buf[32];
    for (; i < blocks; ++i) {
      const uint8_t* wb = wn + bb * i;
      if (i >= full) {
        std::memset(buf, 0, sizeof buf);
        std::memcpy(buf, wb, K - 32 * i);
        wb = buf;
      }
      __m512& acc = (i & 3) == 0 ? acc0 : (i & 3) == 1 ? acc1 : (i & 3) == 2 ? acc2 : acc3;
      block(i, wb, acc);
    }
    const __m512 r = _mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3));
    const __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(r),
                                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(r), 1)));
    const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
    const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
    float u = _mm_cvtss_f32(_mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1)));
    if (qfw_e4m3_elements(f)) u = u * 256.0f;
    if constexpr (S == Scale::Row) u = u * s[n * s_stride];
    if constexpr (!std::is_same_v<Dec, Fp4>) {
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

void f32_qfw_gemv_avx512(LUCID_QFW_GEMV_ARGS) {
  const QfwTables& T = qfw_tables();
  switch (f) {
    case QfwFormat::E4M3Row:
      return rows_loop<Scale::Row>(Fp8<true>{}, f, K, rows, xp, w, s, s_stride, sc, nullptr, bias, y);
    case QfwFormat::E5M2Row:
      return rows_loop<Scale::Row>(Fp8<false>{}, f, K, rows, xp, w, s, s_stride, sc, nullptr, bias, y);
    case QfwFormat::Mxfp8:
      return rows_loop<Scale::Group32>(Fp8<true>{}, f, K, rows, xp, w, s, s_stride, sc, T.e8m0, bias, y);
    case QfwFormat::Mxfp4:
      return rows_loop<Scale::Group32>(Fp4{_mm512_loadu_ps(T.e2m1)}, f, K, rows, xp, w, s, s_stride, sc, T.e8m0,
                                       bias, y);
    case QfwFormat::Nvfp4:
      return rows_loop<Scale::Group16>(Fp4{_mm512_loadu_ps(T.e2m1)}, f, K, rows, xp, w, s, s_stride, sc,
                                       T.e4m3_scale, bias, y);
  }
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
