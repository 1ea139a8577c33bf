// int4 GEMV with int8 activations, AVX2: 8 outputs at a time (8 weight rows
// share each load of activation codes). Per 32 weight bytes of a row: one
// load, and / shift for the two nibble vectors, two vpmaddubsw (unsigned
// nibble x signed code, pair sums <= 3810: no saturation), one vpaddw
// (<= 7620), one vpmaddwd by 1 into int32 lanes (with G = 128 / 256 the
// chunks of a group first add in int16, <= 4 x 7620, and one vpmaddwd
// widens the group). Per block of 8 groups the
// exact group sums come first (each group's 8 row vectors folded by an
// unpack / add tree into one vector, lane i = row i; with G = 32 one 256-bit
// pass covers two groups, kept apart by a vphaddd tree), then the float
// steps, group by group in qd8-qb4w-gemv.h's order, with the block's scales
// and zero points transposed once (a gather costs more). Every lane repeats
// the scalar reference's operations. No FMA. The next tile's weights are
// prefetched while this one is summed (prefetch_tile).
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <algorithm>
#include <type_traits>

#include "cpu/kernels/qd8-qb4w-gemv.h"
#include "cpu/kernels/vquant-isa.h"

LUCID_ISA_BEGIN("avx2")
namespace lucid::kernels {

namespace {

// Sum of the 8 int32 lanes of each a[i], as lane i of the result (exact).
inline __m256i reduce8(const __m256i* a) {
  __m256i t[4], q[2];
  for (int i = 0; i < 4; ++i)  // rows 2i, 2i+1: (x0+x2, y0+y2, x1+x3, y1+y3) per 128-bit half
    t[i] = _mm256_add_epi32(_mm256_unpacklo_epi32(a[2 * i], a[2 * i + 1]), _mm256_unpackhi_epi32(a[2 * i], a[2 * i + 1]));
  for (int i = 0; i < 2; ++i)  // rows 4i .. 4i+3, one lane each per 128-bit half
    q[i] = _mm256_add_epi32(_mm256_unpacklo_epi64(t[2 * i], t[2 * i + 1]), _mm256_unpackhi_epi64(t[2 * i], t[2 * i + 1]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(q[0], q[1], 0x20), _mm256_permute2x128_si256(q[0], q[1], 0x31));
}

// out[j] lane i = p[i][j]: eight 8-float rows transposed (scales or zero
// points of 8 weight rows for 8 consecutive groups; cheaper than gathers).
inline void transpose8(const float* const* p, size_t off, __m256* out) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(p[i] + off);
  for (int i = 0; i < 8; i += 2) t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44), r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44), r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int j = 0; j < 4; ++j) {
    out[j] = _mm256_permute2f128_ps(r[j], r[j + 4], 0x20);
    out[j + 4] = _mm256_permute2f128_ps(r[j], r[j + 4], 0x31);
  }
}

// At the 64-k chunk starting at k the tile reads 8 x 32 weight bytes; the
// same 256 bytes of the next tile (its 8 rows are contiguous) are fetched
// meanwhile, so the next tile is in cache when it starts. The loop is nearly
// compute-bound and the hardware prefetchers lag on 8 interleaved streams:
// measured on Zen3 (4096 x 4096, one thread) 0.341 -> 0.318 ms. Prefetches
// past the end of w do not fault.
// Addresses as integers: the last tile's "next" lies past the buffer.
inline void prefetch_tile(uintptr_t next, size_t k) {
  const uintptr_t p = next + k / 64 * 256;
  for (uintptr_t l = 0; l < 256; l += 64) _mm_prefetch(reinterpret_cast<const char*>(p + l), _MM_HINT_T0);
}

template <bool Flip, bool HasZ>
void gemv(LUCID_QD8_QB4W_GEMV_ARGS) {
  const size_t groups = K / G, bytes = K / 2;
  const __m256i low = _mm256_set1_epi8(0x0f), vflip = _mm256_set1_epi8(static_cast<char>(0x88));
  const __m256i ones = _mm256_set1_epi16(1);
  const __m128i low128 = _mm256_castsi256_si128(low), flip128 = _mm256_castsi256_si128(vflip);
  const __m128i ones128 = _mm256_castsi256_si128(ones);
  for (size_t n0 = 0; n0 < rows; n0 += 8) {
    const size_t nr = std::min<size_t>(8, rows - n0);
    const uint8_t* wr[8];
    const float* sr[8];
    const float* zr[8];  // the zero points' bits, moved as floats by transpose8
    alignas(32) int32_t idx[8];
    for (size_t i = 0; i < 8; ++i) {  // rows past the end repeat the last one; their lanes are dropped
      size_t r = std::min(i, nr - 1);
      wr[i] = w + (n0 + r) * bytes;
      sr[i] = s + (n0 + r) * groups;
      zr[i] = HasZ ? reinterpret_cast<const float*>(zq + (n0 + r) * groups) : nullptr;
      idx[i] = static_cast<int32_t>(r * groups);
    }
    const __m256i vidx = _mm256_load_si256(reinterpret_cast<const __m256i*>(idx));
    const uintptr_t next = reinterpret_cast<uintptr_t>(w) + (n0 + 8) * bytes;  // the next tile's 8 rows, contiguous
    const float* sn = s + n0 * groups;
    const int32_t* zn = HasZ ? zq + n0 * groups : nullptr;
    __m256 u = _mm256_setzero_ps();
    // Blocks of 8 groups: first the exact integer group sums (8 vectors, lane i
    // = row i), then the float steps in group order with the block's scales
    // and zero points transposed once (gathered for a last, partial block).
    for (size_t gb = 0; gb < groups; gb += 8) {
      const size_t nb = std::min<size_t>(8, groups - gb);
      __m256i D[8];
      for (size_t j = 0; j < nb; ++j) {
        const size_t g = gb + j;
        if (G == 32 && j + 1 < nb) {
          // Groups g, g + 1 (g even) are the two halves of one 64-k chunk: one
          // 256-bit pass, the halves kept apart by the reduction.
          const size_t k = g * 32;
          prefetch_tile(next, k);
          const __m256i xl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp + k));
          const __m256i xh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp + k + 32));
          __m256i pair[8];
#pragma GCC unroll 8
          for (int i = 0; i < 8; ++i) {
            __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wr[i] + k / 2));
            if (Flip) v = _mm256_xor_si256(v, vflip);
            __m256i lo = _mm256_and_si256(v, low), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
            __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(lo, xl), _mm256_maddubs_epi16(hi, xh));
            pair[i] = _mm256_madd_epi16(p, ones);
          }
          // Per 128-bit half (group g | g + 1): rows 0-3 in lo, 4-7 in hi.
          __m256i lo = _mm256_hadd_epi32(_mm256_hadd_epi32(pair[0], pair[1]), _mm256_hadd_epi32(pair[2], pair[3]));
          __m256i hi = _mm256_hadd_epi32(_mm256_hadd_epi32(pair[4], pair[5]), _mm256_hadd_epi32(pair[6], pair[7]));
          D[j] = _mm256_permute2x128_si256(lo, hi, 0x20);
          D[j + 1] = _mm256_permute2x128_si256(lo, hi, 0x31);
          ++j;
          continue;
        }
        const size_t k1 = (g + 1) * G;
        size_t k = g * G;
        if (k % 64 == 0 && (G == 128 || G == 256)) {
          // Whole 64-k chunks: the int16 pair sums of up to 4 chunks add
          // exactly (|lane| <= 4 * 7620 < 2^15); one vpmaddwd widens them.
          __m256i a16[8];
          auto chunk = [&](size_t kc, auto first) {
            prefetch_tile(next, kc);
            const __m256i xl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp + kc));
            const __m256i xh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp + kc + 32));
#pragma GCC unroll 8
            for (int i = 0; i < 8; ++i) {
              __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wr[i] + kc / 2));
              if (Flip) v = _mm256_xor_si256(v, vflip);
              __m256i lo = _mm256_and_si256(v, low), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
              __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(lo, xl), _mm256_maddubs_epi16(hi, xh));
              if constexpr (decltype(first)::value) a16[i] = p;
              else a16[i] = _mm256_add_epi16(a16[i], p);
            }
          };
          chunk(k, std::true_type{});
          chunk(k + 64, std::false_type{});
          if (G == 256) chunk(k + 128, std::false_type{}), chunk(k + 192, std::false_type{});
          for (auto& a : a16) a = _mm256_madd_epi16(a, ones);
          D[j] = reduce8(a16);
          continue;
        }
        __m256i acc[8];
        for (auto& a : acc) a = _mm256_setzero_si256();
        // 32 k that are one half of a 64-k chunk (groups of 32 * odd size): 128-bit steps.
        auto half = [&](size_t kb) {
          const size_t c = kb / 64 * 64, h = (kb % 64) / 2;  // h: 0 or 16
          const __m128i xl = _mm_loadu_si128(reinterpret_cast<const __m128i*>(xp + c + h));
          const __m128i xh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(xp + c + 32 + h));
#pragma GCC unroll 8
          for (int i = 0; i < 8; ++i) {
            __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wr[i] + kb / 2));
            if (Flip) v = _mm_xor_si128(v, flip128);
            __m128i lo = _mm_and_si128(v, low128), hi = _mm_and_si128(_mm_srli_epi16(v, 4), low128);
            __m128i p = _mm_add_epi16(_mm_maddubs_epi16(lo, xl), _mm_maddubs_epi16(hi, xh));
            acc[i] = _mm256_add_epi32(acc[i], _mm256_zextsi128_si256(_mm_madd_epi16(p, ones128)));
          }
        };
        if (k % 64 == 32 && k < k1) half(k), k += 32;
        for (; k + 64 <= k1; k += 64) {
          const __m256i xl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp + k));
          const __m256i xh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp + k + 32));
          prefetch_tile(next, k);
#pragma GCC unroll 8
          for (int i = 0; i < 8; ++i) {
            __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wr[i] + k / 2));
            if (Flip) v = _mm256_xor_si256(v, vflip);
            __m256i lo = _mm256_and_si256(v, low), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
            __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(lo, xl), _mm256_maddubs_epi16(hi, xh));
            acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(p, ones));
          }
        }
        if (k < k1) half(k);
        D[j] = reduce8(acc);
      }
      __m256 sT[8], zT[8];
      if (nb == 8) {
        transpose8(sr, gb, sT);
        if (HasZ) transpose8(zr, gb, zT);
      }
      for (size_t j = 0; j < nb; ++j) {
        const size_t g = gb + j;
        __m256i z = !HasZ ? _mm256_set1_epi32(8)
                    : nb == 8 ? _mm256_castps_si256(zT[j]) : _mm256_i32gather_epi32(zn + g, vidx, 4);
        __m256 sg = nb == 8 ? sT[j] : _mm256_i32gather_ps(sn + g, vidx, 4);
        __m256i a = _mm256_sub_epi32(D[j], _mm256_mullo_epi32(z, _mm256_set1_epi32(sx[g])));
        u = _mm256_add_ps(u, _mm256_mul_ps(_mm256_cvtepi32_ps(a), sg));
      }
    }
    __m256 r = _mm256_mul_ps(u, _mm256_set1_ps(sa));
    alignas(32) float out[8];
    if (bias) {
      alignas(32) float b[8] = {};
      std::copy(bias + n0, bias + n0 + nr, b);
      r = _mm256_add_ps(r, _mm256_load_ps(b));
    }
    _mm256_store_ps(out, r);
    std::copy(out, out + nr, y + n0);
  }
}

}  // namespace

void qd8_qb4w_gemv_avx2(LUCID_QD8_QB4W_GEMV_ARGS) {
  if (flip) {
    if (zq) gemv<true, true>(K, G, rows, xp, sx, sa, w, s, zq, flip, bias, y);
    else gemv<true, false>(K, G, rows, xp, sx, sa, w, s, zq, flip, bias, y);
  } else {
    if (zq) gemv<false, true>(K, G, rows, xp, sx, sa, w, s, zq, flip, bias, y);
    else gemv<false, false>(K, G, rows, xp, sx, sa, w, s, zq, flip, bias, y);
  }
}

}  // namespace lucid::kernels
LUCID_ISA_END
#endif
