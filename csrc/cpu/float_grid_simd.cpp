// The float-grid and block-format kernels (cpu/float_grid_simd.h): the scalar
// table, the AVX2 table and the run-time choice. The vector encode is
// core/minifloat.h's encode_select with two rewrites that change no result:
//   - the normal and subnormal cases are one formula: with Ec = clamp(E, 1,
//     e_norm), v = a - ((Ec - 1) << 23) is the rebiased pattern (normal) or
//     the significand with its implicit bit (subnormal; E = 0 has none), and
//     the shift is 23 - mbits + e_norm - Ec (capped at 31);
//   - rne(v, k) = (v + 2^(k-1) - 1 + ((v >> k) & 1)) >> k, which equals
//     (v >> k) + (rem > half || (rem == half && (v >> k) odd)) for every
//     v < 2^31 and 1 <= k <= 31 (no carry out of 32 bits).
// Decode is exact integer assembly of the float32 pattern (FP8) or a lookup
// of the 8 magnitudes (FP4), then the one float multiply by the scale that
// the contract names. Every float operation is the scalar one, in the same
// order: true division, + 0.0, the multiply; no FMA (-ffp-contract=off). One
// exception gives the same bits by other operations: the AVX-512 NVFP4
// elements' quotient (nv_quotient16, two explicit FMAs; checked exhaustively).
#include "cpu/float_grid_simd.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "cpu/kernels/vquant.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "cpu/kernels/prefetch.h"
#include "cpu/kernels/vquant-isa.h"
#endif

namespace lucid::cpu::fgrid {

namespace {

using minifloat::BlockMode;
using minifloat::Format;

// ---- the scalar table ------------------------------------------------------

void encode_scalar(size_t n, const float* x, uint8_t* q, const float* s, bool per_elem, const Encoding& e) {
  for (size_t i = 0; i < n; ++i) q[i] = static_cast<uint8_t>(encode_one(x[i] / s[per_elem ? i : 0] + 0.0f, e));
}

void decode_scalar(size_t n, const uint8_t* q, float* y, const float* s, bool per_elem, const Format& f, bool) {
  for (size_t i = 0; i < n; ++i) y[i] = minifloat::decode(q[i], f) * s[per_elem ? i : 0];
}

void fake_scalar(size_t n, const float* x, float* y, uint8_t* m, const float* s, bool per_elem, const Encoding& e) {
  const float mx = max_finite(e.f);
  for (size_t i = 0; i < n; ++i) {
    const float si = s[per_elem ? i : 0], t = x[i] / si;
    y[i] = minifloat::decode(encode_one(t + 0.0f, e), e.f) * si;
    m[i] = static_cast<uint8_t>(std::fabs(t) <= mx);
  }
}

void block_quantize_scalar(const float* w, int64_t rows, int64_t K, BlockMode mode, uint32_t* words,
                           uint8_t* scales) {
  minifloat::block_quantize_rows(w, rows, K, mode, words, scales);
}

void block_dequantize_scalar(const uint32_t* words, const uint8_t* scales, int64_t rows, int64_t K,
                             BlockMode mode, float* w, bool) {
  minifloat::block_dequantize_rows(words, scales, rows, K, mode, w);
}

// One group's scale and bias (numerics.md, "group-wise affine"): the edge with
// the larger magnitude maps exactly to a code, so that value dequantizes
// exactly. w_max / w_min as std::max / std::min fold them (NaN never chosen).
void affine_params(float w_max, float w_min, float n_bins, float& scale, float& bias) {
  const bool min_side = std::fabs(w_min) > std::fabs(w_max);
  scale = std::max((w_max - w_min) / n_bins, 1e-7f);
  scale = min_side ? scale : -scale;
  const float edge = min_side ? w_min : w_max;
  const float q0 = std::nearbyint(edge / scale);  // round half to even (default rounding mode)
  bias = 0.0f;
  if (q0 != 0.0f) {
    scale = edge / q0;
    bias = edge;
  }
}

// The code of one element: rint((w - bias) / scale) clamped to [0, n_bins]
// in float; NaN gives 0 (what the float -> uint32 conversion of NaN gives on
// x86-64, made explicit).
inline uint32_t affine_code(float w, float scale, float bias, float n_bins) {
  float q = std::nearbyint((w - bias) / scale);
  q = std::min(std::max(q, 0.0f), n_bins);
  return q == q ? static_cast<uint32_t>(q) : 0u;
}

// Code k of a group at bits [k * bits, (k + 1) * bits) of the group's bit
// stream (a group fills whole words); 3-, 5- and 6-bit codes may straddle two
// words.
inline void put_code(uint32_t* out, int k, int bits, uint32_t c) {
  const int bit = k * bits, o = bit % 32;
  out[bit / 32] |= c << o;
  if (o + bits > 32) out[bit / 32 + 1] |= c >> (32 - o);
}

inline uint32_t get_code(const uint32_t* src, int k, int bits) {
  const int bit = k * bits, o = bit % 32;
  uint32_t q = src[bit / 32] >> o;
  if (o + bits > 32) q |= src[bit / 32 + 1] << (32 - o);
  return q & ((1u << bits) - 1u);
}

bool affine_quantize_scalar(const float* w, int64_t groups, int G, int bits, uint32_t* words, float* scales,
                            float* biases) {
  bool finite = true;
  const float n_bins = static_cast<float>((1 << bits) - 1);
  const int wpg = G * bits / 32;
  for (int64_t i = 0; i < groups; ++i) {
    const float* g = w + i * G;
    float w_max = -std::numeric_limits<float>::infinity(), w_min = std::numeric_limits<float>::infinity();
    for (int j = 0; j < G; ++j) {
      w_max = std::max(w_max, g[j]);
      w_min = std::min(w_min, g[j]);
      finite = finite && (minifloat::bits_of(g[j]) & 0x7f800000u) != 0x7f800000u;
    }
    float scale, bias;
    affine_params(w_max, w_min, n_bins, scale, bias);
    uint32_t* out = words + i * wpg;
    for (int j = 0; j < wpg; ++j) out[j] = 0;
    for (int k = 0; k < G; ++k) put_code(out, k, bits, affine_code(g[k], scale, bias, n_bins));
    scales[i] = scale;
    biases[i] = bias;
  }
  return finite;
}

void affine_dequantize_scalar(const uint32_t* words, const float* scales, const float* biases, int64_t groups,
                              int G, int bits, float* w, bool) {
  const int wpg = G * bits / 32;
  for (int64_t i = 0; i < groups; ++i)
    for (int k = 0; k < G; ++k)
      w[i * G + k] = static_cast<float>(get_code(words + i * wpg, k, bits)) * scales[i] + biases[i];
}

#if defined(__x86_64__) || defined(_M_X64)
}  // namespace
}  // namespace lucid::cpu::fgrid

// ---- AVX2 ----------------------------------------------------------------------
LUCID_ISA_BEGIN("avx2")
namespace lucid::cpu::fgrid {
namespace {

struct EncV {
  __m256i abs, cnorm, ccap, k1, kx, maxc, over, infb, nanc;
  __m256 maxf;
  __m128i ss, mshift;
  bool keep, sat;
};

EncV enc_consts(const Encoding& e) {
  const Format& f = e.f;
  const int e_norm = 128 - f.bias, shn = 23 - f.mbits;
  const uint32_t over = e.saturate ? f.max_code : (f.inf_code ? f.inf_code : (f.nan_code ? f.nan_code : f.max_code));
  EncV c;
  c.abs = _mm256_set1_epi32(0x7fffffff);
  // Em's bounds (below) as exponent fields: e_norm, and e_cap, the binade above
  // the largest finite value's (its first code is past max_code).
  c.cnorm = _mm256_set1_epi32(e_norm << 23);
  c.ccap = _mm256_set1_epi32((e_norm + static_cast<int>(f.max_code >> f.mbits)) << 23);
  c.k1 = _mm256_set1_epi32(shn << 23);
  c.kx = _mm256_set1_epi32((e_norm + shn) << 23);
  c.maxc = _mm256_set1_epi32(static_cast<int>(f.max_code));
  c.over = _mm256_set1_epi32(static_cast<int>(over));
  c.infb = _mm256_set1_epi32(0x7f800000);
  c.nanc = _mm256_set1_epi32(static_cast<int>(e.nan_code));
  c.ss = _mm_cvtsi32_si128(31 - f.sign_shift());
  c.mshift = _mm_cvtsi32_si128(shn);
  c.keep = e.nan_keeps_sign;
  c.sat = e.saturate;
  c.maxf = _mm256_set1_ps(minifloat::decode(f.max_code, f));
  return c;
}

// Eight codes (int32 lanes, each < 256) of eight float32 t: the contract's
// rne(v, k) done by the float adder. With Em = clamp(E, e_norm, e_cap) and C =
// 2^(Em - 127 + 23 - mbits) (a power of two above |t|), fl(|t| + C) lies in
// [C, 2C), where float32's spacing is the format's spacing in binade Em
// (subnormals: binade e_norm), so the add rounds |t| to the format's
// precision, to nearest even, exactly; bits(fl(|t| + C)) - bits(C) is the
// rounded significand count m', and the code is m' + ((Em - e_norm) << mbits)
// (a carry into the next binade included). Past e_cap the count only grows, so
// the overflow test still sees code > max_code; float32 subnormals round to 0
// either way (so DAZ could not change a code). C's pattern is Em << 23 plus a
// constant, and Em << 23 is clamp(bits(|t|) & 0x7f800000, e_norm << 23,
// e_cap << 23): the clamp done on the exponent field in place, which saves two
// shifts (the vector shift ports are the narrowest on AMD Zen 4).
inline __m256i enc8(__m256 t, const EncV& c) {
  const __m256i u = _mm256_castps_si256(t);
  const __m256i a = _mm256_and_si256(u, c.abs);
  __m256i code;
  if (c.sat) {
    // Saturating: clamping |t| to the largest finite value first gives the same code (rounding is
    // monotonic and that value is on the grid), and no overflow test is left (NaN is handled below).
    const __m256 af = _mm256_min_ps(_mm256_castsi256_ps(a), c.maxf);
    const __m256i Eb = _mm256_max_epi32(_mm256_and_si256(_mm256_castps_si256(af), c.infb), c.cnorm);
    const __m256i Cb = _mm256_add_epi32(Eb, c.k1);
    const __m256i r = _mm256_castps_si256(_mm256_add_ps(af, _mm256_castsi256_ps(Cb)));
    code = _mm256_add_epi32(_mm256_sub_epi32(r, Cb), _mm256_srl_epi32(_mm256_sub_epi32(Cb, c.kx), c.mshift));
  } else {
    const __m256i Eb = _mm256_min_epi32(_mm256_max_epi32(_mm256_and_si256(a, c.infb), c.cnorm), c.ccap);
    const __m256i Cb = _mm256_add_epi32(Eb, c.k1);
    const __m256i r = _mm256_castps_si256(_mm256_add_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(Cb)));
    code = _mm256_add_epi32(_mm256_sub_epi32(r, Cb), _mm256_srl_epi32(_mm256_sub_epi32(Cb, c.kx), c.mshift));
    code = _mm256_blendv_epi8(code, c.over, _mm256_cmpgt_epi32(code, c.maxc));
  }
  const __m256i nan = _mm256_cmpgt_epi32(a, c.infb);
  code = _mm256_blendv_epi8(code, c.nanc, nan);
  // float32's sign bit moved to the format's; MX FP4 elements give NaN unsigned.
  __m256i sign = _mm256_srl_epi32(_mm256_andnot_si256(c.abs, u), c.ss);
  if (!c.keep) sign = _mm256_andnot_si256(nan, sign);
  return _mm256_or_si256(code, sign);
}

// Four vectors of eight codes (each < 256) -> 32 bytes in order.
inline __m256i pack32(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i x = _mm256_packus_epi16(_mm256_packus_epi32(a, b), _mm256_packus_epi32(c, d));
  return _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// 32 byte codes (each < 16) -> 16 bytes, code 2i in the low nibble of byte i.
inline __m128i nibbles16(__m256i b) {
  const __m256i p = _mm256_maddubs_epi16(b, _mm256_set1_epi16(0x1001));  // lo + 16 * hi per 16-bit lane
  const __m256i x = _mm256_packus_epi16(p, p);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(x, 0x08));
}

// 16 bytes of nibbles -> 32 byte codes in order.
inline __m256i unnibble32(__m128i p) {
  const __m128i m = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_and_si128(p, m), hi = _mm_and_si128(_mm_srli_epi16(p, 4), m);
  return _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
}

inline __m256 div0(__m256 x, __m256 s) { return _mm256_add_ps(_mm256_div_ps(x, s), _mm256_setzero_ps()); }

template <bool PerElem>
void encode_rows(size_t n, const float* x, uint8_t* q, const float* s, const Encoding& e) {
  const EncV c = enc_consts(e);
  __m256 vs = _mm256_set1_ps(s[0]);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    kernels::prefetch_ahead(x + i, 128);
    __m256i r[4];
    for (int k = 0; k < 4; ++k) {
      if (PerElem) vs = _mm256_loadu_ps(s + i + 8 * k);
      r[k] = enc8(div0(_mm256_loadu_ps(x + i + 8 * k), vs), c);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i), pack32(r[0], r[1], r[2], r[3]));
  }
  for (; i + 8 <= n; i += 8) {
    if (PerElem) vs = _mm256_loadu_ps(s + i);
    const __m256i r = enc8(div0(_mm256_loadu_ps(x + i), vs), c), z = _mm256_setzero_si256();
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i), _mm256_castsi256_si128(pack32(r, z, z, z)));
  }
  for (; i < n; ++i) q[i] = static_cast<uint8_t>(encode_one(x[i] / s[PerElem ? i : 0] + 0.0f, e));
}

void encode_avx2(size_t n, const float* x, uint8_t* q, const float* s, bool per_elem, const Encoding& e) {
  if (per_elem) encode_rows<true>(n, x, q, s, e);
  else encode_rows<false>(n, x, q, s, e);
}

struct DecV {
  __m256i mag, one, rebias, sub_lim, inf_code, nan_lo, infb, nanb;
  __m256 step, fp4;
  __m128i ss, mshift;
  bool is_fp4;
};

DecV dec_consts(const Format& f) {
  DecV c;
  c.is_fp4 = f.ebits == 2 && f.mbits == 1;
  c.mag = _mm256_set1_epi32((1 << f.sign_shift()) - 1);
  c.one = _mm256_set1_epi32(1);
  c.rebias = _mm256_set1_epi32((127 - f.bias) << 23);
  c.sub_lim = _mm256_set1_epi32(1 << f.mbits);
  // Magnitudes equal to inf_code are infinity; those >= nan_lo are NaN (none
  // when the format has no such codes: the compares never hold).
  c.inf_code = _mm256_set1_epi32(f.inf_code ? static_cast<int>(f.inf_code) : -1);
  c.nan_lo = _mm256_set1_epi32(f.nan_code ? static_cast<int>(f.inf_code ? f.inf_code + 1 : f.nan_code) : 1 << 20);
  c.infb = _mm256_set1_epi32(0x7f800000);
  c.nanb = _mm256_set1_epi32(0x7fc00000);
  c.step = _mm256_castsi256_ps(_mm256_set1_epi32((127 + 1 - f.bias - f.mbits) << 23));
  float t[8];
  for (uint32_t m = 0; m < 8; ++m) t[m] = minifloat::decode(m, f);
  c.fp4 = _mm256_loadu_ps(t);
  c.ss = _mm_cvtsi32_si128(f.sign_shift());
  c.mshift = _mm_cvtsi32_si128(23 - f.mbits);
  return c;
}

// The float32 values of eight codes (int32 lanes; bits above the code ignored).
inline __m256 dec8(__m256i cd, const DecV& c) {
  const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(_mm256_srl_epi32(cd, c.ss), c.one), 31);
  if (c.is_fp4) return _mm256_or_ps(_mm256_permutevar8x32_ps(c.fp4, cd), _mm256_castsi256_ps(sign));
  const __m256i m = _mm256_and_si256(cd, c.mag);
  __m256i v = _mm256_add_epi32(_mm256_sll_epi32(m, c.mshift), c.rebias);
  const __m256i sub = _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(m), c.step));  // exact
  v = _mm256_blendv_epi8(v, sub, _mm256_cmpgt_epi32(c.sub_lim, m));
  v = _mm256_blendv_epi8(v, c.infb, _mm256_cmpeq_epi32(m, c.inf_code));
  v = _mm256_blendv_epi8(v, c.nanb, _mm256_cmpgt_epi32(m, _mm256_sub_epi32(c.nan_lo, c.one)));
  return _mm256_castsi256_ps(_mm256_or_si256(v, sign));
}

template <bool Stream>
inline void store8(float* y, __m256 v) {
  if (Stream) _mm256_stream_ps(y, v);
  else _mm256_storeu_ps(y, v);
}

template <bool PerElem, bool Stream>
void decode_rows(size_t n, const uint8_t* q, float* y, const float* s, const Format& f) {
  const DecV c = dec_consts(f);
  __m256 vs = _mm256_set1_ps(s[0]);
  size_t i = 0;
  if (Stream)  // streamed stores need 32-byte alignment; y is float-aligned
    for (size_t head = std::min(n, ((32 - (reinterpret_cast<uintptr_t>(y) & 31)) & 31) / 4); i < head; ++i)
      y[i] = minifloat::decode(q[i], f) * s[PerElem ? i : 0];
  for (; i + 32 <= n; i += 32) {
    kernels::prefetch_ahead(q + i, 32, 1024);  // 1 KiB of codes: 4 KiB of output ahead
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + i));
    const __m128i lo = _mm256_castsi256_si128(b), hi = _mm256_extracti128_si256(b, 1);
    const __m256i cd[4] = {_mm256_cvtepu8_epi32(lo), _mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)),
                           _mm256_cvtepu8_epi32(hi), _mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8))};
    for (int k = 0; k < 4; ++k) {
      if (PerElem) vs = _mm256_loadu_ps(s + i + 8 * k);
      store8<Stream>(y + i + 8 * k, _mm256_mul_ps(dec8(cd[k], c), vs));
    }
  }
  for (; i + 8 <= n; i += 8) {
    if (PerElem) vs = _mm256_loadu_ps(s + i);
    const __m256i cd = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + i)));
    store8<Stream>(y + i, _mm256_mul_ps(dec8(cd, c), vs));
  }
  for (; i < n; ++i) y[i] = minifloat::decode(q[i], f) * s[PerElem ? i : 0];
  if (Stream) _mm_sfence();
}

void decode_avx2(size_t n, const uint8_t* q, float* y, const float* s, bool per_elem, const Format& f,
                 bool stream) {
  if (per_elem) stream ? decode_rows<true, true>(n, q, y, s, f) : decode_rows<true, false>(n, q, y, s, f);
  else stream ? decode_rows<false, true>(n, q, y, s, f) : decode_rows<false, false>(n, q, y, s, f);
}

template <bool PerElem>
void fake_rows(size_t n, const float* x, float* y, uint8_t* m, const float* s, const Encoding& e) {
  const EncV c = enc_consts(e);
  const DecV d = dec_consts(e.f);
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), mx = _mm256_set1_ps(max_finite(e.f));
  const __m256i one = _mm256_set1_epi32(1);
  __m256 vs = _mm256_set1_ps(s[0]);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {  // no prefetch: with two output streams it measured slower
    __m256i mk[4];
    for (int k = 0; k < 4; ++k) {
      if (PerElem) vs = _mm256_loadu_ps(s + i + 8 * k);
      const __m256 t = _mm256_div_ps(_mm256_loadu_ps(x + i + 8 * k), vs);
      const __m256i code = enc8(_mm256_add_ps(t, _mm256_setzero_ps()), c);
      _mm256_storeu_ps(y + i + 8 * k, _mm256_mul_ps(dec8(code, d), vs));
      mk[k] = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(_mm256_and_ps(t, absm), mx, _CMP_LE_OQ)), one);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(m + i), pack32(mk[0], mk[1], mk[2], mk[3]));
  }
  for (; i < n; ++i) {
    const float si = s[PerElem ? i : 0], t = x[i] / si;
    y[i] = minifloat::decode(encode_one(t + 0.0f, e), e.f) * si;
    m[i] = static_cast<uint8_t>(std::fabs(t) <= max_finite(e.f));
  }
}

void fake_avx2(size_t n, const float* x, float* y, uint8_t* m, const float* s, bool per_elem, const Encoding& e) {
  if (per_elem) fake_rows<true>(n, x, y, m, s, e);
  else fake_rows<false>(n, x, y, m, s, e);
}

// max |x| over 32 floats (4 vectors), and whether any is NaN.
inline float amax32(const __m256* x, int nv, bool& nan) {
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 m = _mm256_setzero_ps(), un = _mm256_setzero_ps();
  for (int k = 0; k < nv; ++k) {
    m = _mm256_max_ps(_mm256_and_ps(x[k], absm), m);
    un = _mm256_or_ps(un, _mm256_cmp_ps(x[k], x[k], _CMP_UNORD_Q));
  }
  nan = _mm256_movemask_ps(un) != 0;
  // Every lane is a non-negative non-NaN value (NaN lanes lose to m: maxps
  // returns its second operand when either is NaN), so the fold order cannot
  // change the result.
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  return _mm_cvtss_f32(h);
}

// One MX group of 32 (E8M0 scale): its scale code and 32 byte codes.
inline __m256i mx_group(const float* g, bool fp8, const EncV& ce, uint8_t& scale) {
  __m256 x[4];
  for (int k = 0; k < 4; ++k) x[k] = _mm256_loadu_ps(g + 8 * k);
  bool nan;
  float amax = amax32(x, 4, nan);
  if (nan) amax = minifloat::float_of(0x7fc00000u);
  const uint32_t sb = minifloat::e8m0_of_scale(amax / (fp8 ? 448.0f : 6.0f));
  scale = static_cast<uint8_t>(sb);
  if (sb == 0xffu) return _mm256_set1_epi8(static_cast<char>(fp8 ? 0x7e : 0x7));
  // fl(w / d) for d = 2^(sb - 127) equals fl(w * 2^(127 - sb)): both are the
  // correctly rounded value of the same real number, and 1 / d (2^-127 ..
  // 2^127) is itself a float32, so the multiply replaces the division exactly.
  const __m256 inv = _mm256_set1_ps(1.0f / minifloat::e8m0_value(sb));
  __m256i r[4];
  for (int k = 0; k < 4; ++k) r[k] = enc8(_mm256_mul_ps(x[k], inv), ce);
  return pack32(r[0], r[1], r[2], r[3]);
}

// One NVFP4 group of 16 (E4M3 scale): 16 codes in r[0..1].
inline void nv_group(const float* g, const EncV& ce, uint8_t& scale, __m256i* r) {
  __m256 x[2] = {_mm256_loadu_ps(g), _mm256_loadu_ps(g + 8)};
  bool nan;
  float amax = amax32(x, 2, nan);
  if (nan) amax = minifloat::float_of(0x7fc00000u);
  const uint32_t sc = minifloat::e4m3_saturating(amax / 6.0f);
  scale = static_cast<uint8_t>(sc);
  const float d = minifloat::decode(sc, minifloat::kE4M3FN);
  const __m256 vd = _mm256_set1_ps(d);
  for (int k = 0; k < 2; ++k)
    r[k] = enc8(d == 0.0f ? _mm256_mul_ps(x[k], _mm256_setzero_ps()) : _mm256_div_ps(x[k], vd), ce);
}

// A batch is several hundred instructions with a serial scale computation in
// the middle, more than the out-of-order window holds, so the loads of the next
// batch would not start until this one is nearly done: with the weight coming
// from DRAM the kernel then waits on memory latency. Each group prefetches its
// own floats kBatchAhead bytes ahead as it is encoded, spread over the batch
// (measured on an Intel Xeon at 16M elements, one thread: mxfp8 / mxfp4 0.6-0.7x
// astype without prefetch, 0.75-0.98x with the whole batch prefetched at its
// start, 0.93-1.08x spread).
constexpr uintptr_t kBatchAhead = 4096;

// Lane g of the result: op folded over the eight lanes of m[g]. With max it
// only ever sees non-negative non-NaN values (and with or, masks), so the fold
// order cannot change the result.
struct MaxOp {
  __m256 operator()(__m256 a, __m256 b) const { return _mm256_max_ps(a, b); }
};
struct MinOp {
  __m256 operator()(__m256 a, __m256 b) const { return _mm256_min_ps(a, b); }
};
struct OrOp {
  __m256 operator()(__m256 a, __m256 b) const { return _mm256_or_ps(a, b); }
};

template <class Op>
inline __m256 fold8x8(const __m256* m, Op op) {
  const __m256 a = op(_mm256_unpacklo_ps(m[0], m[1]), _mm256_unpackhi_ps(m[0], m[1]));
  const __m256 b = op(_mm256_unpacklo_ps(m[2], m[3]), _mm256_unpackhi_ps(m[2], m[3]));
  const __m256 c = op(_mm256_unpacklo_ps(m[4], m[5]), _mm256_unpackhi_ps(m[4], m[5]));
  const __m256 d = op(_mm256_unpacklo_ps(m[6], m[7]), _mm256_unpackhi_ps(m[6], m[7]));
  const __m256 ab = op(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0)), _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
  const __m256 cd = op(_mm256_shuffle_ps(c, d, _MM_SHUFFLE(1, 0, 1, 0)), _mm256_shuffle_ps(c, d, _MM_SHUFFLE(3, 2, 3, 2)));
  return op(_mm256_permute2f128_ps(ab, cd, 0x20), _mm256_permute2f128_ps(ab, cd, 0x31));
}

// The group amax of eight groups of 8 * nv floats each (lane g: group g), NaN
// where the group holds one: the scalar loop's max |w|.
inline __m256 amax8(const float* x, int nv) {
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 m[8], u[8];
  for (int g = 0; g < 8; ++g) {
    m[g] = _mm256_setzero_ps();
    u[g] = _mm256_setzero_ps();
    for (int k = 0; k < nv; ++k) {
      const __m256 v = _mm256_loadu_ps(x + (g * nv + k) * 8);
      m[g] = _mm256_max_ps(_mm256_and_ps(v, absm), m[g]);  // a NaN lane loses (maxps returns its second operand)
      u[g] = _mm256_or_ps(u[g], _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
  }
  const __m256 amax = fold8x8(m, MaxOp{});
  const __m256 nan = fold8x8(u, OrOp{});
  return _mm256_blendv_ps(amax, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)), nan);
}

// minifloat::e8m0_of_scale of eight s >= 0 (or NaN). A subnormal s lies in
// (0, 2^-126), so ceil(log2 s) clamped to -127 is -126 above 2^-127 and -127
// at or below it: code 1 or 0.
inline __m256i e8m0_8(__m256 s) {
  const __m256i us = _mm256_castps_si256(s), one = _mm256_set1_epi32(1);
  const __m256i mant0 = _mm256_cmpeq_epi32(_mm256_and_si256(us, _mm256_set1_epi32(0x7fffff)), _mm256_setzero_si256());
  const __m256i normal = _mm256_min_epi32(_mm256_add_epi32(_mm256_srli_epi32(us, 23), _mm256_andnot_si256(mant0, one)),
                                          _mm256_set1_epi32(254));
  const __m256i sub = _mm256_and_si256(_mm256_cmpgt_epi32(us, _mm256_set1_epi32(0x00400000)), one);
  __m256i code = _mm256_blendv_epi8(normal, sub, _mm256_cmpgt_epi32(_mm256_set1_epi32(0x00800000), us));
  code = _mm256_blendv_epi8(code, _mm256_set1_epi32(127), _mm256_cmpeq_epi32(us, _mm256_setzero_si256()));
  const __m256 nonfinite = _mm256_cmp_ps(s, _mm256_set1_ps(std::numeric_limits<float>::max()), _CMP_NLE_UQ);
  return _mm256_blendv_epi8(code, _mm256_set1_epi32(255), _mm256_castps_si256(nonfinite));
}

// Eight int32 codes (each < 256) -> 8 bytes.
inline void store8_bytes(uint8_t* p, __m256i c) {
  const __m256i z = _mm256_setzero_si256();
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(pack32(c, z, z, z)));
}

// Eight MX groups (256 floats): scale codes to sc[0..7], element codes to out
// (fp8: 256 bytes; fp4: 128 bytes of nibbles).
inline void mx_batch8(const float* x, bool fp8, const EncV& ce, uint8_t* out, uint8_t* sc) {
  const __m256 s = _mm256_div_ps(amax8(x, 4), _mm256_set1_ps(fp8 ? 448.0f : 6.0f));
  const __m256i code = e8m0_8(s);
  store8_bytes(sc, code);
  // 1 / d = 2^(127 - code): the pattern (254 - code) << 23, or the subnormal 2^-127 for code 254 (the
  // multiply by it replaces fl(w / d) exactly; see mx_group).
  __m256i invb = _mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(254), code), 23);
  invb = _mm256_blendv_epi8(invb, _mm256_set1_epi32(0x00400000), _mm256_cmpeq_epi32(code, _mm256_set1_epi32(254)));
  const __m256 inv = _mm256_castsi256_ps(invb);
  alignas(32) int32_t codes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(codes), code);
  for (int g = 0; g < 8; ++g) {
    const float* xg = x + 32 * g;
    kernels::prefetch_ahead(xg, 128, kBatchAhead);
    __m256i b;
    if (codes[g] == 0xff) {
      b = _mm256_set1_epi8(static_cast<char>(fp8 ? 0x7e : 0x7));
    } else {
      const __m256 ig = _mm256_permutevar8x32_ps(inv, _mm256_set1_epi32(g));
      __m256i r[4];
      for (int k = 0; k < 4; ++k) r[k] = enc8(_mm256_mul_ps(_mm256_loadu_ps(xg + 8 * k), ig), ce);
      b = pack32(r[0], r[1], r[2], r[3]);
    }
    if (fp8) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * g), b);
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * g), nibbles16(b));
  }
}

// Eight NVFP4 groups (128 floats): scale codes to sc[0..7], 64 bytes of nibbles to out.
inline void nv_batch8(const float* x, const EncV& ce, const EncV& cs, const DecV& ds, uint8_t* out, uint8_t* sc) {
  const __m256i scode = enc8(_mm256_div_ps(amax8(x, 2), _mm256_set1_ps(6.0f)), cs);  // e4m3_saturating(amax / 6)
  store8_bytes(sc, scode);
  const __m256 d = dec8(scode, ds), zero = _mm256_setzero_ps();
  for (int g = 0; g < 8; g += 2) {
    kernels::prefetch_ahead(x + 16 * g, 128, kBatchAhead);
    __m256i r[4];
    for (int h = 0; h < 2; ++h) {
      const __m256 dg = _mm256_permutevar8x32_ps(d, _mm256_set1_epi32(g + h));
      const __m256 dz = _mm256_cmp_ps(dg, zero, _CMP_EQ_OQ);
      for (int k = 0; k < 2; ++k) {
        const __m256 v = _mm256_loadu_ps(x + 16 * (g + h) + 8 * k);
        r[2 * h + k] = enc8(_mm256_blendv_ps(_mm256_div_ps(v, dg), _mm256_mul_ps(v, zero), dz), ce);  // d == 0: w * 0
      }
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 8 * g), nibbles16(pack32(r[0], r[1], r[2], r[3])));
  }
}

void block_quantize_avx2(const float* w, int64_t rows, int64_t K, BlockMode mode, uint32_t* words,
                         uint8_t* scales) {
  const Encoding e8{minifloat::kE4M3FN, true, 0x7e, true}, e4{minifloat::kE2M1FN, true, 0x7, false};
  const EncV ce = enc_consts(mode == BlockMode::Mxfp8 ? e8 : e4), cs = enc_consts(e8);
  const DecV ds = dec_consts(minifloat::kE4M3FN);
  const int G = minifloat::block_group(mode), bits = minifloat::block_bits(mode);
  const int64_t groups = K / G, wpr = K * bits / 32;
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = w + r * K;
    uint8_t* out = reinterpret_cast<uint8_t*>(words + r * wpr);  // little-endian: code k at bit k * bits
    uint8_t* sc = scales + r * groups;
    int64_t j = 0;
    if (mode == BlockMode::Nvfp4)
      for (; j + 128 <= K; j += 128) nv_batch8(x + j, ce, cs, ds, out + j / 2, sc + j / 16);
    else
      for (; j + 256 <= K; j += 256)
        mx_batch8(x + j, mode == BlockMode::Mxfp8, ce, out + j * bits / 8, sc + j / 32);
    for (; j < K; j += 32) {
      if (mode == BlockMode::Mxfp8) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j), mx_group(x + j, true, ce, sc[j / 32]));
      } else if (mode == BlockMode::Mxfp4) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j / 2), nibbles16(mx_group(x + j, false, ce, sc[j / 32])));
      } else {
        __m256i c[4];
        nv_group(x + j, ce, sc[j / 16], c);
        nv_group(x + j + 16, ce, sc[j / 16 + 1], c + 2);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j / 2), nibbles16(pack32(c[0], c[1], c[2], c[3])));
      }
    }
  }
}

template <bool Stream>
void block_dequantize_rows(const uint32_t* words, const uint8_t* scales, int64_t rows, int64_t K, BlockMode mode,
                           float* w) {
  const int G = minifloat::block_group(mode), bits = minifloat::block_bits(mode);
  const int64_t groups = K / G, wpr = K * bits / 32;
  const DecV c = dec_consts(mode == BlockMode::Mxfp8 ? minifloat::kE4M3FN : minifloat::kE2M1FN);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* in = reinterpret_cast<const uint8_t*>(words + r * wpr);
    const uint8_t* sc = scales + r * groups;
    float* y = w + r * K;
    for (int64_t j = 0; j < K; j += 32) {
      const __m256i b = mode == BlockMode::Mxfp8
                            ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + j))
                            : unnibble32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + j / 2)));
      __m256 d0, d1;
      if (mode == BlockMode::Nvfp4) {
        d0 = _mm256_set1_ps(minifloat::decode(sc[j / 16], minifloat::kE4M3FN));
        d1 = _mm256_set1_ps(minifloat::decode(sc[j / 16 + 1], minifloat::kE4M3FN));
      } else {
        d0 = d1 = _mm256_set1_ps(minifloat::e8m0_value(sc[j / 32]));
      }
      const __m128i lo = _mm256_castsi256_si128(b), hi = _mm256_extracti128_si256(b, 1);
      store8<Stream>(y + j, _mm256_mul_ps(dec8(_mm256_cvtepu8_epi32(lo), c), d0));
      store8<Stream>(y + j + 8, _mm256_mul_ps(dec8(_mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)), c), d0));
      store8<Stream>(y + j + 16, _mm256_mul_ps(dec8(_mm256_cvtepu8_epi32(hi), c), d1));
      store8<Stream>(y + j + 24, _mm256_mul_ps(dec8(_mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8)), c), d1));
    }
  }
  if (Stream) _mm_sfence();
}

void block_dequantize_avx2(const uint32_t* words, const uint8_t* scales, int64_t rows, int64_t K, BlockMode mode,
                           float* w, bool stream) {
  // Streamed stores need every row 32-byte aligned: K is a multiple of 32, so w must be.
  if (stream && (reinterpret_cast<uintptr_t>(w) & 31) == 0)
    block_dequantize_rows<true>(words, scales, rows, K, mode, w);
  else
    block_dequantize_rows<false>(words, scales, rows, K, mode, w);
}

// Affine: 32 codes (int32 lanes in c[0..3], each <= 255) of one group into
// the group's words at code offset k0 (a multiple of 32).
inline void affine_put32(uint32_t* out, int k0, int bits, const __m256i* c) {
  const __m256i b = pack32(c[0], c[1], c[2], c[3]);
  uint8_t* o = reinterpret_cast<uint8_t*>(out) + k0 * bits / 8;
  if (bits == 8) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), b);
  } else if (bits == 4) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), nibbles16(b));
  } else if (bits == 2) {
    const __m256i p = _mm256_maddubs_epi16(b, _mm256_set1_epi16(0x0401));  // c0 + 4 c1 per 16 bits
    const __m256i q = _mm256_madd_epi16(p, _mm256_set1_epi32(0x00100001));  // + 16 (c2 + 4 c3) per 32 bits
    const __m256i x = _mm256_packus_epi16(_mm256_packus_epi32(q, q), _mm256_setzero_si256());
    const __m256i y = _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o), _mm256_castsi256_si128(y));
  } else {
    alignas(32) uint8_t t[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(t), b);
    for (int k = 0; k < 32; ++k) put_code(out, k0 + k, bits, t[k]);
  }
}

// One affine group's codes into its words (scale and bias broadcast).
inline void affine_group_codes(const float* g, int G, int bits, __m256 vs, __m256 vb, uint32_t* out) {
  const __m256 vbins = _mm256_set1_ps(static_cast<float>((1 << bits) - 1)), zero = _mm256_setzero_ps();
  const __m256i mask = _mm256_set1_epi32((1 << bits) - 1);
  if (bits != 2 && bits != 4 && bits != 8)
    for (int j = 0; j < G * bits / 32; ++j) out[j] = 0;
  for (int k0 = 0; k0 < G; k0 += 32) {
    __m256i c[4];
    for (int k = 0; k < 4; ++k) {
      __m256 q = _mm256_div_ps(_mm256_sub_ps(_mm256_loadu_ps(g + k0 + 8 * k), vb), vs);
      q = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      q = _mm256_min_ps(vbins, _mm256_max_ps(zero, q));        // the scalar clamp's operand order
      c[k] = _mm256_and_si256(_mm256_cvttps_epi32(q), mask);  // NaN: 0x80000000 & mask = 0
    }
    affine_put32(out, k0, bits, c);
  }
}

// max / min of one affine group, lane-wise (and the lanes that saw NaN or
// +-inf into bad). std::max(acc, x) keeps acc unless acc < x; maxps(x, acc) is
// x > acc ? x : acc: the same choice, NaN included. The lanes hold no NaN, so
// their fold order does not matter (signed zeros aside, which affine_params
// cannot tell apart).
inline void affine_fold(const float* g, int G, __m256& mx, __m256& mn, __m256& bad) {
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), fmax = _mm256_set1_ps(std::numeric_limits<float>::max());
  mx = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  mn = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  for (int j = 0; j < G; j += 8) {
    const __m256 x = _mm256_loadu_ps(g + j);
    mx = _mm256_max_ps(x, mx);
    mn = _mm256_min_ps(x, mn);
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(_mm256_and_ps(x, absm), fmax, _CMP_NLE_UQ));
  }
}

// affine_params on eight groups at once (lane g: group g), the same float
// operations in the same order; std::max(a, 1e-7f) is maxps(1e-7, a) (a NaN
// a stays), q0 != 0 is unordered-or-unequal (NaN counts as nonzero).
inline void affine_params8(__m256 w_max, __m256 w_min, float n_bins, __m256& scale, __m256& bias) {
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 min_side = _mm256_cmp_ps(_mm256_and_ps(w_min, absm), _mm256_and_ps(w_max, absm), _CMP_GT_OQ);
  __m256 sc = _mm256_max_ps(_mm256_set1_ps(1e-7f), _mm256_div_ps(_mm256_sub_ps(w_max, w_min), _mm256_set1_ps(n_bins)));
  sc = _mm256_blendv_ps(_mm256_xor_ps(sc, _mm256_set1_ps(-0.0f)), sc, min_side);
  const __m256 edge = _mm256_blendv_ps(w_max, w_min, min_side);
  const __m256 q0 = _mm256_round_ps(_mm256_div_ps(edge, sc), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 nz = _mm256_cmp_ps(q0, _mm256_setzero_ps(), _CMP_NEQ_UQ);
  scale = _mm256_blendv_ps(sc, _mm256_div_ps(edge, q0), nz);
  bias = _mm256_and_ps(edge, nz);
}

bool affine_quantize_avx2(const float* w, int64_t groups, int G, int bits, uint32_t* words, float* scales,
                          float* biases) {
  if (G % 32 != 0) return affine_quantize_scalar(w, groups, G, bits, words, scales, biases);
  const float n_bins = static_cast<float>((1 << bits) - 1);
  const int wpg = G * bits / 32;
  __m256 bad = _mm256_setzero_ps();  // lanes that saw NaN or +-inf
  int64_t i = 0;
  for (; i + 8 <= groups; i += 8) {  // eight groups: their parameters as one vector
    __m256 mx[8], mn[8];
    for (int g = 0; g < 8; ++g) affine_fold(w + (i + g) * G, G, mx[g], mn[g], bad);
    __m256 vs, vb;
    affine_params8(fold8x8(mx, MaxOp{}), fold8x8(mn, MinOp{}), n_bins, vs, vb);
    _mm256_storeu_ps(scales + i, vs);
    _mm256_storeu_ps(biases + i, vb);
    for (int g = 0; g < 8; ++g) {
      kernels::prefetch_ahead(w + (i + g) * G, 4u * static_cast<unsigned>(G), kBatchAhead);
      const __m256i lane = _mm256_set1_epi32(g);
      affine_group_codes(w + (i + g) * G, G, bits, _mm256_permutevar8x32_ps(vs, lane),
                         _mm256_permutevar8x32_ps(vb, lane), words + (i + g) * wpg);
    }
  }
  for (; i < groups; ++i) {
    __m256 mx, mn;
    affine_fold(w + i * G, G, mx, mn, bad);
    __m128 hx = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    __m128 hn = _mm_min_ps(_mm256_castps256_ps128(mn), _mm256_extractf128_ps(mn, 1));
    hx = _mm_max_ps(hx, _mm_movehl_ps(hx, hx));
    hn = _mm_min_ps(hn, _mm_movehl_ps(hn, hn));
    hx = _mm_max_ss(hx, _mm_shuffle_ps(hx, hx, 1));
    hn = _mm_min_ss(hn, _mm_shuffle_ps(hn, hn, 1));
    float scale, bias;
    affine_params(_mm_cvtss_f32(hx), _mm_cvtss_f32(hn), n_bins, scale, bias);
    affine_group_codes(w + i * G, G, bits, _mm256_set1_ps(scale), _mm256_set1_ps(bias), words + i * wpg);
    scales[i] = scale;
    biases[i] = bias;
  }
  return _mm256_movemask_ps(bad) == 0;
}

template <bool Stream>
void affine_dequantize_rows(const uint32_t* words, const float* scales, const float* biases, int64_t groups, int G,
                            int bits, float* w) {
  const int wpg = G * bits / 32;
  const __m256i sh4 = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28), sh2 = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  for (int64_t i = 0; i < groups; ++i) {
    const uint32_t* src = words + i * wpg;
    const __m256 vs = _mm256_set1_ps(scales[i]), vb = _mm256_set1_ps(biases[i]);
    float* y = w + i * G;
    for (int k = 0; k < G; k += 8) {
      __m256i c;
      if (bits == 8) {
        c = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(reinterpret_cast<const uint8_t*>(src) + k)));
      } else if (bits == 4) {
        c = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(src[k / 8])), sh4), _mm256_set1_epi32(15));
      } else {
        const uint32_t h = src[k / 16] >> (k % 16 * 2);
        c = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(h)), sh2), _mm256_set1_epi32(3));
      }
      store8<Stream>(y + k, _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(c), vs), vb));
    }
  }
  if (Stream) _mm_sfence();
}

void affine_dequantize_avx2(const uint32_t* words, const float* scales, const float* biases, int64_t groups, int G,
                            int bits, float* w, bool stream) {
  if (G % 16 != 0 || (bits != 2 && bits != 4 && bits != 8))
    return affine_dequantize_scalar(words, scales, biases, groups, G, bits, w, stream);
  if (stream && (reinterpret_cast<uintptr_t>(w) & 31) == 0)
    affine_dequantize_rows<true>(words, scales, biases, groups, G, bits, w);
  else
    affine_dequantize_rows<false>(words, scales, biases, groups, G, bits, w);
}

}  // namespace
}  // namespace lucid::cpu::fgrid
LUCID_ISA_END

#if !defined(LUCID_KERNELS_SIMDE_AVX512)  // SIMDe test builds (emulated AVX-512) leave this table out
// ---- AVX-512 (F + BW): the grid encode, decode and fake_quantize and the
// MX / NVFP4 elements, sixteen lanes with mask registers; the same operations
// as the AVX2 kernels lane for lane. The other entries are the AVX2 kernels.
LUCID_ISA_BEGIN("avx512f,avx512bw")
namespace lucid::cpu::fgrid {
namespace {

struct EncZ {
  __m512i abs, cnorm, ccap, k1, kx, maxc, over, infb, nanc, sbit;
  __m512 maxf;
  __m128i mshift;
  bool keep, sat;
  bool fp4;                  // saturating E2M1: sat_code16 by the table below
  __m512i fp4_lo, fp4_hi;    // fp4_table's 32 entries
};

// Saturating E2M1 by table. Every rounding boundary of the FP4 grid (0.25, 0.75,
// 1.25, 1.75, 2.5, 3.5, 5) has at most two fraction bits, so for 0 <= t <= 6 the
// float32 exponent and top two mantissa bits (bits >> 21) and whether any lower
// bit is set decide the code. Entry i is for bits >> 21 = 0x1F0 + i (t from
// 0.125; smaller t saturate to entry 0, code 0): the code of that pattern itself
// (low nibble) and of the values just above it (high nibble), both from the
// scalar encoder. Seven operations where the float-adder rounding takes nine.
std::array<int32_t, 32> fp4_table() {
  std::array<int32_t, 32> t{};
  for (uint32_t i = 0; i < 32; ++i) {
    const uint32_t at = std::min<uint32_t>((0x1F0u + i) << 21, 0x40C00000u);  // past 6: 6's entry (unused)
    const uint32_t exact = minifloat::encode(at, minifloat::kE2M1FN, true);
    const uint32_t above = minifloat::encode(std::min<uint32_t>(at | 1u, 0x40C00000u), minifloat::kE2M1FN, true);
    t[i] = static_cast<int32_t>(exact | (above << 4));
  }
  return t;
}

EncZ enc_consts16(const Encoding& e) {
  const Format& f = e.f;
  const int e_norm = 128 - f.bias, shn = 23 - f.mbits;
  const uint32_t over = e.saturate ? f.max_code : (f.inf_code ? f.inf_code : (f.nan_code ? f.nan_code : f.max_code));
  static const std::array<int32_t, 32> kFp4 = fp4_table();
  return {_mm512_set1_epi32(0x7fffffff), _mm512_set1_epi32(e_norm << 23),
          _mm512_set1_epi32((e_norm + static_cast<int>(f.max_code >> f.mbits)) << 23), _mm512_set1_epi32(shn << 23),
          _mm512_set1_epi32((e_norm + shn) << 23), _mm512_set1_epi32(static_cast<int>(f.max_code)),
          _mm512_set1_epi32(static_cast<int>(over)), _mm512_set1_epi32(0x7f800000),
          _mm512_set1_epi32(static_cast<int>(e.nan_code)), _mm512_set1_epi32(1 << f.sign_shift()),
          _mm512_set1_ps(minifloat::decode(f.max_code, f)),
          _mm_cvtsi32_si128(shn), e.nan_keeps_sign, e.saturate,
          e.saturate && f.ebits == 2 && f.mbits == 1,
          _mm512_loadu_si512(kFp4.data()), _mm512_loadu_si512(kFp4.data() + 16)};
}

// fp4_table's lookup for the bit pattern a of 0 <= t (not NaN).
inline __m512i fp4_code16(__m512i a, const EncZ& c) {
  const __m512i t = _mm512_castps_si512(_mm512_min_ps(_mm512_castsi512_ps(a), _mm512_set1_ps(6.0f)));
  const __m512i i = _mm512_subs_epu16(_mm512_srli_epi32(t, 21), _mm512_set1_epi32(0x1F0));  // < 2^16: one word
  const __m512i e = _mm512_permutex2var_epi32(c.fp4_lo, i, c.fp4_hi);
  const __mmask16 above = _mm512_test_epi32_mask(t, _mm512_set1_epi32(0x1FFFFF));
  return _mm512_and_si512(_mm512_mask_srli_epi32(e, above, e, 4), _mm512_set1_epi32(0xF));
}

// The saturating encode's unsigned code of |t| (its bit pattern a, not NaN):
// clamping |t| to the largest finite value first gives the same code, as in enc8.
inline __m512i sat_code16(__m512i a, const EncZ& c) {
  if (c.fp4) return fp4_code16(a, c);
  const __m512 af = _mm512_min_ps(_mm512_castsi512_ps(a), c.maxf);
  const __m512i Eb = _mm512_max_epi32(_mm512_and_si512(_mm512_castps_si512(af), c.infb), c.cnorm);
  const __m512i Cb = _mm512_add_epi32(Eb, c.k1);
  const __m512i r = _mm512_castps_si512(_mm512_add_ps(af, _mm512_castsi512_ps(Cb)));
  return _mm512_add_epi32(_mm512_sub_epi32(r, Cb), _mm512_srl_epi32(_mm512_sub_epi32(Cb, c.kx), c.mshift));
}

// enc8 (see there) on sixteen lanes.
inline __m512i enc16(__m512 t, const EncZ& c) {
  const __m512i u = _mm512_castps_si512(t);
  const __m512i a = _mm512_and_si512(u, c.abs);
  __m512i code;
  if (c.sat) {
    code = sat_code16(a, c);
  } else {
    const __m512i Eb = _mm512_min_epi32(_mm512_max_epi32(_mm512_and_si512(a, c.infb), c.cnorm), c.ccap);
    const __m512i Cb = _mm512_add_epi32(Eb, c.k1);
    const __m512i r = _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(Cb)));
    code = _mm512_add_epi32(_mm512_sub_epi32(r, Cb), _mm512_srl_epi32(_mm512_sub_epi32(Cb, c.kx), c.mshift));
    code = _mm512_mask_mov_epi32(code, _mm512_cmpgt_epi32_mask(code, c.maxc), c.over);
  }
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(a, c.infb);
  code = _mm512_mask_mov_epi32(code, nan, c.nanc);
  __mmask16 neg = _mm512_cmplt_epi32_mask(u, _mm512_setzero_si512());  // float32's sign bit
  if (!c.keep) neg &= static_cast<__mmask16>(~nan);
  return _mm512_mask_or_epi32(code, neg, code, c.sbit);  // the format's sign bit
}

// code | the format's sign bit where the float32 pattern u is negative: a compare
// into a mask and a masked or, no shift (see enc8 on the shift ports).
inline __m512i with_sign16(__m512i code, __m512i u, const EncZ& c) {
  return _mm512_mask_or_epi32(code, _mm512_cmplt_epi32_mask(u, _mm512_setzero_si512()), code, c.sbit);
}

struct DecZ {
  __m512i mag, one, rebias, sub_lim, inf_code, nan_lo, infb, nanb;
  __m512 step, fp4;
  __m128i ss, mshift;
  bool is_fp4;
};

DecZ dec_consts16(const Format& f) {
  DecZ c;
  c.is_fp4 = f.ebits == 2 && f.mbits == 1;
  c.mag = _mm512_set1_epi32((1 << f.sign_shift()) - 1);
  c.one = _mm512_set1_epi32(1);
  c.rebias = _mm512_set1_epi32((127 - f.bias) << 23);
  c.sub_lim = _mm512_set1_epi32(1 << f.mbits);
  c.inf_code = _mm512_set1_epi32(f.inf_code ? static_cast<int>(f.inf_code) : -1);
  c.nan_lo = _mm512_set1_epi32(f.nan_code ? static_cast<int>(f.inf_code ? f.inf_code + 1 : f.nan_code) : 1 << 20);
  c.infb = _mm512_set1_epi32(0x7f800000);
  c.nanb = _mm512_set1_epi32(0x7fc00000);
  c.step = _mm512_castsi512_ps(_mm512_set1_epi32((127 + 1 - f.bias - f.mbits) << 23));
  float t[16];
  for (uint32_t m = 0; m < 16; ++m) t[m] = minifloat::decode(m, f);  // FP4: all sixteen codes, sign included
  c.fp4 = _mm512_loadu_ps(t);
  c.ss = _mm_cvtsi32_si128(f.sign_shift());
  c.mshift = _mm_cvtsi32_si128(23 - f.mbits);
  return c;
}

inline __m512 dec16(__m512i cd, const DecZ& c) {
  if (c.is_fp4) return _mm512_permutexvar_ps(cd, c.fp4);  // the low 4 bits index the table
  const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(_mm512_srl_epi32(cd, c.ss), c.one), 31);
  const __m512i m = _mm512_and_si512(cd, c.mag);
  __m512i v = _mm512_add_epi32(_mm512_sll_epi32(m, c.mshift), c.rebias);
  const __m512i sub = _mm512_castps_si512(_mm512_mul_ps(_mm512_cvtepi32_ps(m), c.step));  // exact
  v = _mm512_mask_mov_epi32(v, _mm512_cmpgt_epi32_mask(c.sub_lim, m), sub);
  v = _mm512_mask_mov_epi32(v, _mm512_cmpeq_epi32_mask(m, c.inf_code), c.infb);
  v = _mm512_mask_mov_epi32(v, _mm512_cmpgt_epi32_mask(m, _mm512_sub_epi32(c.nan_lo, c.one)), c.nanb);
  return _mm512_castsi512_ps(_mm512_or_si512(v, sign));
}

inline __m512 div0_16(__m512 x, __m512 s) { return _mm512_add_ps(_mm512_div_ps(x, s), _mm512_setzero_ps()); }

template <bool PerElem>
void encode_rows16(size_t n, const float* x, uint8_t* q, const float* s, const Encoding& e) {
  const EncZ c = enc_consts16(e);
  __m512 vs = _mm512_set1_ps(s[0]);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    kernels::prefetch_ahead(x + i, 128);
    for (int k = 0; k < 2; ++k) {
      if (PerElem) vs = _mm512_loadu_ps(s + i + 16 * k);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i + 16 * k),
                       _mm512_cvtepi32_epi8(enc16(div0_16(_mm512_loadu_ps(x + i + 16 * k), vs), c)));
    }
  }
  if (i < n) {  // the tail under a mask: lanes past n read nothing and write nothing
    const __mmask16 m0 = n - i >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __mmask16 m1 = n - i > 16 ? static_cast<__mmask16>((1u << (n - i - 16)) - 1u) : __mmask16(0);
    for (int k = 0; k < 2; ++k) {
      const __mmask16 mk = k ? m1 : m0;
      if (!mk) break;
      if (PerElem) vs = _mm512_maskz_loadu_ps(mk, s + i + 16 * k);
      const __m512 xv = _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), mk, x + i + 16 * k);
      const __m512 sv = PerElem ? _mm512_mask_mov_ps(_mm512_set1_ps(1.0f), mk, vs) : vs;
      _mm512_mask_cvtepi32_storeu_epi8(q + i + 16 * k, mk, enc16(div0_16(xv, sv), c));
    }
  }
}

void encode_avx512(size_t n, const float* x, uint8_t* q, const float* s, bool per_elem, const Encoding& e) {
  if (per_elem) encode_rows16<true>(n, x, q, s, e);
  else encode_rows16<false>(n, x, q, s, e);
}

template <bool PerElem>
void fake_rows16(size_t n, const float* x, float* y, uint8_t* m, const float* s, const Encoding& e) {
  const EncZ c = enc_consts16(e);
  const DecZ d = dec_consts16(e.f);
  const __m512i absm = _mm512_set1_epi32(0x7fffffff);
  const __m512 mx = _mm512_set1_ps(max_finite(e.f));
  const __m512i one = _mm512_set1_epi32(1);
  __m512 vs = _mm512_set1_ps(s[0]);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {  // no prefetch: with two output streams it measured 0.85-0.9x
    if (PerElem) vs = _mm512_loadu_ps(s + i);
    const __m512 t = _mm512_div_ps(_mm512_loadu_ps(x + i), vs);
    const __m512i code = enc16(_mm512_add_ps(t, _mm512_setzero_ps()), c);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(dec16(code, d), vs));
    const __m512 at = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(t), absm));
    const __mmask16 in = _mm512_cmp_ps_mask(at, mx, _CMP_LE_OQ);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(m + i), _mm512_cvtepi32_epi8(_mm512_maskz_mov_epi32(in, one)));
  }
  for (; i < n; ++i) {
    const float si = s[PerElem ? i : 0], t = x[i] / si;
    y[i] = minifloat::decode(encode_one(t + 0.0f, e), e.f) * si;
    m[i] = static_cast<uint8_t>(std::fabs(t) <= max_finite(e.f));
  }
}

void fake_avx512(size_t n, const float* x, float* y, uint8_t* m, const float* s, bool per_elem, const Encoding& e) {
  if (per_elem) fake_rows16<true>(n, x, y, m, s, e);
  else fake_rows16<false>(n, x, y, m, s, e);
}

template <bool Stream>
inline void store16(float* y, __m512 v) {
  if (Stream) _mm512_stream_ps(y, v);
  else _mm512_storeu_ps(y, v);
}

// Streamed (non-temporal) stores for outputs past the cache, as the AVX2 rows
// do: with AVX2's eight lanes, the FP8 decode's arithmetic (not the memory)
// bounded a streamed dequantize on an Intel Xeon (mxfp8 at 0.53x numpy's
// astype), so the streamed path is AVX-512 too.
template <bool PerElem, bool Stream>
void decode_rows16(size_t n, const uint8_t* q, float* y, const float* s, const Format& f) {
  const DecZ c = dec_consts16(f);
  __m512 vs = _mm512_set1_ps(s[0]);
  size_t i = 0;
  if (Stream)  // streamed stores need 64-byte alignment; y is float-aligned
    for (size_t head = std::min(n, ((64 - (reinterpret_cast<uintptr_t>(y) & 63)) & 63) / 4); i < head; ++i)
      y[i] = minifloat::decode(q[i], f) * s[PerElem ? i : 0];
  for (; i + 16 <= n; i += 16) {
    kernels::prefetch_ahead(q + i, 16, 1024);  // 1 KiB of codes: 4 KiB of output ahead
    if (PerElem) vs = _mm512_loadu_ps(s + i);
    const __m512i cd = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + i)));
    store16<Stream>(y + i, _mm512_mul_ps(dec16(cd, c), vs));
  }
  for (; i < n; ++i) y[i] = minifloat::decode(q[i], f) * s[PerElem ? i : 0];
  if (Stream) _mm_sfence();
}

// The MX / NVFP4 blocks: group scales as in block_quantize_avx2 (eight
// groups a vector), the elements sixteen lanes at a time.
inline __m128i enc16_bytes(__m512 t, const EncZ& c) { return _mm512_cvtepi32_epi8(enc16(t, c)); }

inline void mx_batch8_z(const float* x, bool fp8, const EncZ& ce, uint8_t* out, uint8_t* sc) {
  const __m256 s = _mm256_div_ps(amax8(x, 4), _mm256_set1_ps(fp8 ? 448.0f : 6.0f));
  const __m256i code = e8m0_8(s);
  store8_bytes(sc, code);
  __m256i invb = _mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(254), code), 23);
  invb = _mm256_blendv_epi8(invb, _mm256_set1_epi32(0x00400000), _mm256_cmpeq_epi32(code, _mm256_set1_epi32(254)));
  alignas(32) int32_t codes[8];
  alignas(32) float inv[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(codes), code);
  _mm256_store_si256(reinterpret_cast<__m256i*>(inv), invb);
  for (int g = 0; g < 8; ++g) {
    const float* xg = x + 32 * g;
    __m256i b;
    if (codes[g] == 0xff) {
      b = _mm256_set1_epi8(static_cast<char>(fp8 ? 0x7e : 0x7));
    } else {  // fl(w / d) as fl(w * (1 / d)): exact, see mx_group
      const __m512 ig = _mm512_set1_ps(inv[g]);
      b = _mm256_set_m128i(enc16_bytes(_mm512_mul_ps(_mm512_loadu_ps(xg + 16), ig), ce),
                           enc16_bytes(_mm512_mul_ps(_mm512_loadu_ps(xg), ig), ce));
    }
    if (fp8) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * g), b);
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * g), nibbles16(b));
  }
}

inline void nv_batch8_z(const float* x, const EncZ& ce, const EncV& cs, const DecV& ds, uint8_t* out, uint8_t* sc) {
  const __m256i scode = enc8(_mm256_div_ps(amax8(x, 2), _mm256_set1_ps(6.0f)), cs);  // e4m3_saturating(amax / 6)
  store8_bytes(sc, scode);
  alignas(32) float d[8];
  _mm256_store_ps(d, dec8(scode, ds));
  __m128i c[8];
  for (int g = 0; g < 8; ++g) {
    const __m512 v = _mm512_loadu_ps(x + 16 * g);
    c[g] = enc16_bytes(d[g] == 0.0f ? _mm512_mul_ps(v, _mm512_setzero_ps()) : _mm512_div_ps(v, _mm512_set1_ps(d[g])), ce);
  }
  for (int g = 0; g < 8; g += 2)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 8 * g), nibbles16(_mm256_set_m128i(c[g + 1], c[g])));
}

// ---- sixteen groups a vector --------------------------------------------------
// The batch8 forms above compute eight groups' scales a ymm, with NaN tracked
// by a separate compare, and NVFP4 divides every element. The batch16 forms
// compute sixteen groups' scales in one zmm (1.1-1.3x the batch8 forms' rate
// on a 16 MB weight, before either prefetched) and rewrite three steps, none of
// which changes a code:
//   - amax as an unsigned integer max of |w|'s bit patterns: for non-negative
//     floats the integer order is the float order, and every NaN pattern lies
//     above +inf's, so a group holding NaN gets a NaN amax (then the scale code
//     0xFF, or E4M3's NaN) with no separate test, as the scalar loop does;
//   - a group with a finite scale holds only finite elements whose quotient
//     cannot be NaN, so its elements skip the encoder's NaN handling;
//   - NVFP4's fl(w / d) as the reciprocal-and-residual quotient of
//     nv_quotient16 (exact for every E4M3 divisor; see there).

// Lane g of the result: the unsigned max over the sixteen lanes of m[g]
// (a transpose-and-fold; max is order-free, so the fold order changes nothing).
inline __m512i fold16x16_maxu(const __m512i* m) {
  __m512i a[8], b[4], c[2];
  for (int i = 0; i < 8; ++i)  // 128-bit lane: [p0 q0 p1 q1] of the pair (m[2i], m[2i + 1])
    a[i] = _mm512_max_epu32(_mm512_unpacklo_epi32(m[2 * i], m[2 * i + 1]), _mm512_unpackhi_epi32(m[2 * i], m[2 * i + 1]));
  for (int i = 0; i < 4; ++i)  // 128-bit lane: one partial each of groups 4i .. 4i + 3
    b[i] = _mm512_max_epu32(_mm512_unpacklo_epi64(a[2 * i], a[2 * i + 1]), _mm512_unpackhi_epi64(a[2 * i], a[2 * i + 1]));
  for (int i = 0; i < 2; ++i)  // fold the 128-bit lanes pairwise
    c[i] = _mm512_max_epu32(_mm512_shuffle_i32x4(b[2 * i], b[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm512_shuffle_i32x4(b[2 * i], b[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm512_max_epu32(_mm512_shuffle_i32x4(c[0], c[1], _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_i32x4(c[0], c[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

// e8m0_8 on sixteen lanes (s >= 0 or NaN).
inline __m512i e8m0_16(__m512 s) {
  const __m512i us = _mm512_castps_si512(s), one = _mm512_set1_epi32(1), E = _mm512_srli_epi32(us, 23);
  __m512i code = _mm512_min_epi32(_mm512_mask_add_epi32(E, _mm512_test_epi32_mask(us, _mm512_set1_epi32(0x7fffff)),
                                                        E, one),
                                  _mm512_set1_epi32(254));
  const __m512i sub = _mm512_maskz_mov_epi32(_mm512_cmpgt_epi32_mask(us, _mm512_set1_epi32(0x00400000)), one);
  code = _mm512_mask_mov_epi32(code, _mm512_cmplt_epi32_mask(us, _mm512_set1_epi32(0x00800000)), sub);
  code = _mm512_mask_mov_epi32(code, _mm512_cmpeq_epi32_mask(us, _mm512_setzero_si512()), _mm512_set1_epi32(127));
  const __mmask16 nonfinite = _mm512_cmp_ps_mask(s, _mm512_set1_ps(std::numeric_limits<float>::max()), _CMP_NLE_UQ);
  return _mm512_mask_mov_epi32(code, nonfinite, _mm512_set1_epi32(255));
}

// enc16 for a saturating encoding of t that is not NaN (the codes are the same).
inline __m512i enc16_finite(__m512 t, const EncZ& c) {
  const __m512i u = _mm512_castps_si512(t);
  return with_sign16(sat_code16(_mm512_and_si512(u, c.abs), c), u, c);
}

// 32 nibble codes (int32 lanes: codes 0-15 in lo, 16-31 in hi, each < 16) -> 16 bytes,
// code 2i in the low nibble of byte i.
inline __m128i nibbles32(__m512i lo, __m512i hi) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512i e = _mm512_permutex2var_epi32(lo, even, hi), o = _mm512_permutex2var_epi32(lo, odd, hi);
  return _mm512_cvtepi32_epi8(_mm512_or_si512(e, _mm512_slli_epi32(o, 4)));
}

// 64 nibble codes (int32 lanes of c[0..3], codes 16k .. 16k + 15 in c[k], each
// < 16) -> 32 bytes, code 2i in the low nibble of byte i. The packs and the
// multiply-add work inside 128-bit lanes, so lane L ends up holding, as 16-bit
// words, the byte pairs 2L, 2L + 1 of each c[k]; one word permute puts them in
// order. Six operations for 64 codes, where nibbles32 takes five for 32 (its
// two cross-lane permutes and the truncating move are the costly ones).
inline __m256i nibbles64(const __m512i* c) {
  const __m512i b = _mm512_packus_epi16(_mm512_packus_epi32(c[0], c[1]), _mm512_packus_epi32(c[2], c[3]));
  const __m512i m = _mm512_maddubs_epi16(b, _mm512_set1_epi16(0x1001));  // lo + 16 * hi per byte pair
  const __m512i w = _mm512_packus_epi16(m, m);  // word 8L + k: bytes 2L, 2L + 1 of c[k]'s 8 (then again)
  // output word 4k + j (bytes 2j, 2j + 1 of c[k]'s) from word 8j + k
  alignas(64) static constexpr uint16_t kOrder[32] = {0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27};
  return _mm512_castsi512_si256(_mm512_permutexvar_epi16(_mm512_load_si512(kOrder), w));
}

// fl(v / d) for a finite v and an E4M3 value d > 0, with r = fl(1 / d): q0 =
// fl(v * r), e = v - q0 * d (exact by one FMA), q = fl(q0 + e * r) (one FMA).
// This is Markstein's correction, and for every divisor with at most four
// significant bits (every E4M3 value) it gives the correctly rounded quotient
// of every float32 v: the quotient depends only on the significands (scaling v
// or d by a power of two scales q0, e and q exactly), and lucid_kernel_tests
// checks all 2^23 significands of v against each of the eight significands of
// d ("nvfp4 quotient"). Where the true quotient is below 2^-126 the residual can
// underflow and q may miss by an ulp, but every such quotient (and q, its sign
// kept by the final or) encodes to FP4's signed zero. The sign is or-ed back in
// because q0 + e * r of v = -0 is +0.
inline __m512 nv_quotient16(__m512 v, __m512 d, __m512 r) {
  const __m512 q0 = _mm512_mul_ps(v, r);
  const __m512 q = _mm512_fmadd_ps(_mm512_fnmadd_ps(q0, d, v), r, q0);
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(q), _mm512_castps_si512(v),
                                                       _mm512_set1_epi32(static_cast<int>(0x80000000u)), 0xf8));
}

// The NVFP4 codes of sixteen finite v for a nonzero scale: the quotient of |v|
// (nv_quotient16's steps; negating v negates q0, the residual and q exactly, so
// this is |fl(v / d)|, and +0 for v = -0), encoded, with v's sign or-ed back.
inline __m512i nv_codes16(__m512 v, __m512 d, __m512 r, const EncZ& c) {
  const __m512 a = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), c.abs));
  const __m512 q0 = _mm512_mul_ps(a, r);
  const __m512 q = _mm512_fmadd_ps(_mm512_fnmadd_ps(q0, d, a), r, q0);
  return with_sign16(sat_code16(_mm512_castps_si512(q), c), _mm512_castps_si512(v), c);
}

// Sixteen MX groups (512 floats): scale codes to sc[0..15], element codes to
// out (fp8: 512 bytes; fp4: 256 bytes of nibbles).
inline void mx_batch16_z(const float* x, bool fp8, const EncZ& ce, uint8_t* out, uint8_t* sc) {
  const __m512i absm = _mm512_set1_epi32(0x7fffffff);
  __m512i m[16];
  for (int g = 0; g < 16; ++g)
    m[g] = _mm512_max_epu32(_mm512_and_si512(_mm512_loadu_si512(x + 32 * g), absm),
                            _mm512_and_si512(_mm512_loadu_si512(x + 32 * g + 16), absm));
  const __m512 s = _mm512_div_ps(_mm512_castsi512_ps(fold16x16_maxu(m)), _mm512_set1_ps(fp8 ? 448.0f : 6.0f));
  const __m512i code = e8m0_16(s);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(sc), _mm512_cvtepi32_epi8(code));
  // 1 / d = 2^(127 - code), as in mx_batch8.
  const __m512i invb = _mm512_mask_mov_epi32(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(254), code), 23),
                                             _mm512_cmpeq_epi32_mask(code, _mm512_set1_epi32(254)),
                                             _mm512_set1_epi32(0x00400000));
  alignas(64) int32_t codes[16];
  alignas(64) float inv[16];
  _mm512_store_si512(codes, code);
  _mm512_store_si512(inv, invb);
  if (!fp8) {  // two groups a step: 64 codes, packed by nibbles64
    for (int g = 0; g < 16; g += 2) {
      kernels::prefetch_ahead(x + 32 * g, 256, kBatchAhead);
      __m512i c[4];
      for (int h = 0; h < 2; ++h) {
        const float* xg = x + 32 * (g + h);
        if (codes[g + h] == 0xff) {  // NaN or inf in the group: every element NaN (code 7)
          c[2 * h] = c[2 * h + 1] = _mm512_set1_epi32(0x7);
          continue;
        }
        const __m512 ig = _mm512_set1_ps(inv[g + h]);  // fl(w / d) as fl(w * (1 / d)): exact, see mx_group
        c[2 * h] = enc16_finite(_mm512_mul_ps(_mm512_loadu_ps(xg), ig), ce);
        c[2 * h + 1] = enc16_finite(_mm512_mul_ps(_mm512_loadu_ps(xg + 16), ig), ce);
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16 * g), nibbles64(c));
    }
    return;
  }
  for (int g = 0; g < 16; ++g) {
    const float* xg = x + 32 * g;
    kernels::prefetch_ahead(xg, 128, kBatchAhead);
    if (codes[g] == 0xff) {  // NaN or inf in the group
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * g), _mm256_set1_epi8(0x7e));
      continue;
    }
    const __m512 ig = _mm512_set1_ps(inv[g]);  // fl(w / d) as fl(w * (1 / d)): exact, see mx_group
    const __m512i c0 = enc16_finite(_mm512_mul_ps(_mm512_loadu_ps(xg), ig), ce);
    const __m512i c1 = enc16_finite(_mm512_mul_ps(_mm512_loadu_ps(xg + 16), ig), ce);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 32 * g), _mm512_cvtepi32_epi8(c0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 32 * g + 16), _mm512_cvtepi32_epi8(c1));
  }
}

// Sixteen NVFP4 groups (256 floats): scale codes to sc[0..15], 128 bytes of nibbles to out.
inline void nv_batch16_z(const float* x, const EncZ& ce, const EncZ& cs, const DecZ& ds, uint8_t* out, uint8_t* sc) {
  const __m512i absm = _mm512_set1_epi32(0x7fffffff);
  __m512i m[16];
  for (int g = 0; g < 16; ++g) m[g] = _mm512_and_si512(_mm512_loadu_si512(x + 16 * g), absm);
  const __m512i amax = fold16x16_maxu(m);
  const __m512i scode = enc16(_mm512_div_ps(_mm512_castsi512_ps(amax), _mm512_set1_ps(6.0f)), cs);  // e4m3_saturating(amax / 6)
  _mm_storeu_si128(reinterpret_cast<__m128i*>(sc), _mm512_cvtepi32_epi8(scode));
  const __m512 d = dec16(scode, ds);
  alignas(64) float dv[16], rv[16];
  alignas(64) uint32_t am[16];
  _mm512_store_ps(dv, d);
  _mm512_store_ps(rv, _mm512_div_ps(_mm512_set1_ps(1.0f), d));  // d == 0 lanes: unused
  _mm512_store_si512(am, amax);
  __m512i c[2];
  // The usual batch: every scale nonzero and every element finite. Its loop
  // has no per-group tests, two groups a step (quantize_mx nvfp4 of a 64 MB
  // weight, one thread: 1.13x the rate of the loop below).
  const __mmask16 plain = _mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_NEQ_UQ) &
                          _mm512_cmplt_epu32_mask(amax, _mm512_set1_epi32(0x7f800000));
  if (plain == 0xffff) {
    for (int g = 0; g < 16; g += 4) {
      kernels::prefetch_ahead(x + 16 * g, 256, kBatchAhead);
      __m512i c4[4];
      for (int h = 0; h < 4; ++h)
        c4[h] = nv_codes16(_mm512_loadu_ps(x + 16 * (g + h)), _mm512_set1_ps(dv[g + h]), _mm512_set1_ps(rv[g + h]), ce);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * g), nibbles64(c4));
    }
    return;
  }
  for (int g = 0; g < 16; ++g) {
    kernels::prefetch_ahead(x + 16 * g, 64, kBatchAhead);
    const __m512 v = _mm512_loadu_ps(x + 16 * g);
    if (dv[g] == 0.0f) c[g & 1] = enc16(_mm512_mul_ps(v, _mm512_setzero_ps()), ce);  // d == 0: w * 0
    else if (am[g] >= 0x7f800000u) c[g & 1] = enc16(_mm512_div_ps(v, _mm512_set1_ps(dv[g])), ce);  // inf / NaN
    else c[g & 1] = nv_codes16(v, _mm512_set1_ps(dv[g]), _mm512_set1_ps(rv[g]), ce);
    if (g & 1) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 8 * (g - 1)), nibbles32(c[0], c[1]));
  }
}

// ---- affine groups, sixteen lanes ------------------------------------------------
// affine_quantize_avx2's operations lane for lane, with the group folds and the
// element codes in zmm (4- and 8-bit codes; the other widths stay AVX2). The
// parameters of eight groups are still one ymm of affine_params8.
inline void affine_fold16(const float* g, int G, __m256& mx, __m256& mn, __mmask16& bad) {
  const __m512i absm = _mm512_set1_epi32(0x7fffffff);
  const __m512 fmax = _mm512_set1_ps(std::numeric_limits<float>::max());
  __m512 x_max = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 x_min = _mm512_set1_ps(std::numeric_limits<float>::infinity());
  for (int j = 0; j < G; j += 16) {
    const __m512 x = _mm512_loadu_ps(g + j);
    x_max = _mm512_max_ps(x, x_max);  // a NaN x keeps the running value, as std::max(acc, x) does
    x_min = _mm512_min_ps(x, x_min);
    bad |= _mm512_cmp_ps_mask(_mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), absm)), fmax, _CMP_NLE_UQ);
  }
  // No lane holds NaN, so folding the halves in any order gives the same max / min.
  mx = _mm256_max_ps(_mm512_castps512_ps256(x_max), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x_max), 1)));
  mn = _mm256_min_ps(_mm512_castps512_ps256(x_min), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x_min), 1)));
}

inline void affine_group_codes16(const float* g, int G, int bits, __m512 vs, __m512 vb, uint32_t* out) {
  const __m512 vbins = _mm512_set1_ps(static_cast<float>((1 << bits) - 1)), zero = _mm512_setzero_ps();
  const __m512i mask = _mm512_set1_epi32((1 << bits) - 1);
  uint8_t* o = reinterpret_cast<uint8_t*>(out);
  if (bits == 4 && G % 64 == 0) {  // 64 codes a step, packed by nibbles64
    for (int k0 = 0; k0 < G; k0 += 64) {
      __m512i c[4];
      for (int k = 0; k < 4; ++k) {
        __m512 q = _mm512_div_ps(_mm512_sub_ps(_mm512_loadu_ps(g + k0 + 16 * k), vb), vs);
        q = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q = _mm512_min_ps(vbins, _mm512_max_ps(zero, q));        // as below
        c[k] = _mm512_and_si512(_mm512_cvttps_epi32(q), mask);
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + k0 / 2), nibbles64(c));
    }
    return;
  }
  for (int k0 = 0; k0 < G; k0 += 32) {
    __m512i c[2];
    for (int k = 0; k < 2; ++k) {
      __m512 q = _mm512_div_ps(_mm512_sub_ps(_mm512_loadu_ps(g + k0 + 16 * k), vb), vs);
      q = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      q = _mm512_min_ps(vbins, _mm512_max_ps(zero, q));        // the scalar clamp's operand order
      c[k] = _mm512_and_si512(_mm512_cvttps_epi32(q), mask);  // NaN: 0x80000000 & mask = 0
    }
    if (bits == 8) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + k0), _mm512_cvtepi32_epi8(c[0]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + k0 + 16), _mm512_cvtepi32_epi8(c[1]));
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + k0 / 2), nibbles32(c[0], c[1]));
    }
  }
}

bool affine_quantize_avx512(const float* w, int64_t groups, int G, int bits, uint32_t* words, float* scales,
                            float* biases) {
  if (G % 32 != 0 || (bits != 4 && bits != 8) || groups < 8)
    return affine_quantize_avx2(w, groups, G, bits, words, scales, biases);
  const float n_bins = static_cast<float>((1 << bits) - 1);
  const int wpg = G * bits / 32;
  __mmask16 bad = 0;  // lanes that saw NaN or +-inf
  int64_t i = 0;
  for (; i + 8 <= groups; i += 8) {
    __m256 mx[8], mn[8];
    for (int g = 0; g < 8; ++g) affine_fold16(w + (i + g) * G, G, mx[g], mn[g], bad);
    __m256 vs, vb;
    affine_params8(fold8x8(mx, MaxOp{}), fold8x8(mn, MinOp{}), n_bins, vs, vb);
    _mm256_storeu_ps(scales + i, vs);
    _mm256_storeu_ps(biases + i, vb);
    for (int g = 0; g < 8; ++g) {
      kernels::prefetch_ahead(w + (i + g) * G, 4u * static_cast<unsigned>(G), kBatchAhead);
      affine_group_codes16(w + (i + g) * G, G, bits, _mm512_set1_ps(scales[i + g]), _mm512_set1_ps(biases[i + g]),
                           words + (i + g) * wpg);
    }
  }
  // The last groups (fewer than eight) as the AVX2 kernel does them.
  const bool tail_finite =
      i == groups || affine_quantize_avx2(w + i * G, groups - i, G, bits, words + i * wpg, scales + i, biases + i);
  return bad == 0 && tail_finite;
}

void block_quantize_avx512(const float* w, int64_t rows, int64_t K, BlockMode mode, uint32_t* words,
                           uint8_t* scales) {
  const Encoding e8{minifloat::kE4M3FN, true, 0x7e, true}, e4{minifloat::kE2M1FN, true, 0x7, false};
  const Encoding& ee = mode == BlockMode::Mxfp8 ? e8 : e4;
  const EncZ cz = enc_consts16(ee);
  const EncZ csz = enc_consts16(e8);
  const DecZ dsz = dec_consts16(minifloat::kE4M3FN);
  const EncV ce = enc_consts(ee), cs = enc_consts(e8);
  const DecV ds = dec_consts(minifloat::kE4M3FN);
  const int G = minifloat::block_group(mode), bits = minifloat::block_bits(mode);
  const int64_t groups = K / G, wpr = K * bits / 32;
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = w + r * K;
    uint8_t* out = reinterpret_cast<uint8_t*>(words + r * wpr);  // little-endian: code k at bit k * bits
    uint8_t* sc = scales + r * groups;
    int64_t j = 0;
    if (mode == BlockMode::Nvfp4) {
      for (; j + 256 <= K; j += 256) nv_batch16_z(x + j, cz, csz, dsz, out + j / 2, sc + j / 16);
      for (; j + 128 <= K; j += 128) nv_batch8_z(x + j, cz, cs, ds, out + j / 2, sc + j / 16);
    } else {
      const bool fp8 = mode == BlockMode::Mxfp8;
      for (; j + 512 <= K; j += 512) mx_batch16_z(x + j, fp8, cz, out + j * bits / 8, sc + j / 32);
      for (; j + 256 <= K; j += 256) mx_batch8_z(x + j, fp8, cz, out + j * bits / 8, sc + j / 32);
    }
    for (; j < K; j += 32) {  // the row's last groups, as the AVX2 kernel does them
      if (mode == BlockMode::Mxfp8) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j), mx_group(x + j, true, ce, sc[j / 32]));
      } else if (mode == BlockMode::Mxfp4) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j / 2), nibbles16(mx_group(x + j, false, ce, sc[j / 32])));
      } else {
        __m256i c[4];
        nv_group(x + j, ce, sc[j / 16], c);
        nv_group(x + j + 16, ce, sc[j / 16 + 1], c + 2);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j / 2), nibbles16(pack32(c[0], c[1], c[2], c[3])));
      }
    }
  }
}

template <bool Stream>
void block_dequantize_rows16(const uint32_t* words, const uint8_t* scales, int64_t rows, int64_t K, BlockMode mode,
                             float* w) {
  const int G = minifloat::block_group(mode), bits = minifloat::block_bits(mode);
  const int64_t groups = K / G, wpr = K * bits / 32;
  const DecZ c = dec_consts16(mode == BlockMode::Mxfp8 ? minifloat::kE4M3FN : minifloat::kE2M1FN);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* in = reinterpret_cast<const uint8_t*>(words + r * wpr);
    const uint8_t* sc = scales + r * groups;
    float* y = w + r * K;
    for (int64_t j = 0; j < K; j += 32) {
      const __m256i b = mode == BlockMode::Mxfp8
                            ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + j))
                            : unnibble32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + j / 2)));
      __m512 d0, d1;
      if (mode == BlockMode::Nvfp4) {
        d0 = _mm512_set1_ps(minifloat::decode(sc[j / 16], minifloat::kE4M3FN));
        d1 = _mm512_set1_ps(minifloat::decode(sc[j / 16 + 1], minifloat::kE4M3FN));
      } else {
        d0 = d1 = _mm512_set1_ps(minifloat::e8m0_value(sc[j / 32]));
      }
      store16<Stream>(y + j, _mm512_mul_ps(dec16(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(b)), c), d0));
      store16<Stream>(y + j + 16, _mm512_mul_ps(dec16(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(b, 1)), c), d1));
    }
  }
  if (Stream) _mm_sfence();
}

}  // namespace

void nv_quotient_avx512(size_t n, const float* v, float d, float* q) {
  const __m512 vd = _mm512_set1_ps(d), vr = _mm512_set1_ps(1.0f / d);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(q + i, nv_quotient16(_mm512_loadu_ps(v + i), vd, vr));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(q + i, m, nv_quotient16(_mm512_maskz_loadu_ps(m, v + i), vd, vr));
  }
}
}  // namespace lucid::cpu::fgrid
LUCID_ISA_END
#endif  // !LUCID_KERNELS_SIMDE_AVX512

namespace lucid::cpu::fgrid {
namespace {

#if !defined(LUCID_KERNELS_SIMDE_AVX512)
void decode_avx512(size_t n, const uint8_t* q, float* y, const float* s, bool per_elem, const Format& f,
                   bool stream) {
  if (per_elem) stream ? decode_rows16<true, true>(n, q, y, s, f) : decode_rows16<true, false>(n, q, y, s, f);
  else stream ? decode_rows16<false, true>(n, q, y, s, f) : decode_rows16<false, false>(n, q, y, s, f);
}

void block_dequantize_avx512(const uint32_t* words, const uint8_t* scales, int64_t rows, int64_t K, BlockMode mode,
                             float* w, bool stream) {
  // Streamed stores need every 16-float vector 64-byte aligned: K is a multiple
  // of 32 (128 bytes a row), so w must be.
  if (stream && (reinterpret_cast<uintptr_t>(w) & 63) == 0)
    block_dequantize_rows16<true>(words, scales, rows, K, mode, w);
  else
    block_dequantize_rows16<false>(words, scales, rows, K, mode, w);
}
#endif  // !LUCID_KERNELS_SIMDE_AVX512
#endif  // x86-64

}  // namespace

const Kernels& scalar() {
  static const Kernels k{"scalar",         encode_scalar,          decode_scalar,  fake_scalar,         block_quantize_scalar,
                         block_dequantize_scalar, affine_quantize_scalar, affine_dequantize_scalar};
  return k;
}

#if defined(__x86_64__) || defined(_M_X64)
const Kernels* avx2() {
  static const Kernels k{"avx2",         encode_avx2,          decode_avx2,  fake_avx2,         block_quantize_avx2,
                         block_dequantize_avx2, affine_quantize_avx2, affine_dequantize_avx2};
  return &k;
}
#if defined(LUCID_KERNELS_SIMDE_AVX512)
const Kernels* avx512() { return nullptr; }
#else
const Kernels* avx512() {
  static const Kernels k{"avx512",         encode_avx512,          decode_avx512,  fake_avx512,         block_quantize_avx512,
                         block_dequantize_avx512, affine_quantize_avx512, affine_dequantize_avx2};
  return &k;
}
#endif
#else
const Kernels* avx2() { return nullptr; }
const Kernels* avx512() { return nullptr; }
#endif

#if !(defined(__x86_64__) || defined(_M_X64)) || defined(LUCID_KERNELS_SIMDE_AVX512)
void nv_quotient_avx512(size_t, const float*, float, float*) {
  throw std::logic_error("nv_quotient_avx512: this build has no AVX-512 table");
}
#endif

const Kernels& best() {
  static const Kernels* k = [] {
    if (const Kernels* a = avx512(); a && kernels::isa_supported("avx512") && kernels::isa_supported("avx2")) return a;
    if (const Kernels* a = avx2(); a && kernels::isa_supported("avx2")) return a;
    return &scalar();
  }();
  return *k;
}

}  // namespace lucid::cpu::fgrid
