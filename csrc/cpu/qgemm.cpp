// The int8 GEMM driver around the microkernels of cpu/kernels: weight and
// activation packing, cache blocking, threading over M x N tiles on lucid's
// pool, and the fused zero-point correction + bias + requantization epilogue.
// One epilogue serves every kernel, so all engines give the same bits by
// construction once their raw products agree (which tests/kernels checks).
#include "cpu/qgemm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>

#include "core/errors.h"
#include "core/thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// The epilogue loops vectorize (cvtdq2ps, mulps, roundps, addps, min/max):
// give them an AVX2 clone chosen at load time on x86-64 glibc. Each step is a
// separately rounded IEEE operation, and -ffp-contract=off forbids FMA.
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && !defined(__clang__)
#define LUCID_EPILOGUE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LUCID_EPILOGUE_CLONES
#endif

namespace lucid::kernels {

// ----------------------------------------------------------------- packing --

namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

QPackedWeights qgemm_pack_weights(const QGemmKernel& kernel, const int8_t* w, int64_t n, int64_t k, int64_t ldw) {
  QPackedWeights p;
  p.kernel = &kernel;
  p.n = n, p.k = k, p.kp = round_up(std::max<int64_t>(k, 1), kernel.kpad);
  const int64_t nr = kernel.nr, kr = kernel.kr, blocks = (n + nr - 1) / nr, kp = p.kp;
  p.data.assign(static_cast<size_t>(blocks * nr * kp), 0);  // zero padding adds nothing
  p.col_sum.assign(static_cast<size_t>(n), 0);
  // Block by block, k-group by k-group: k-group g of column j lands at
  // ((g * nr) + j) * kr, a fixed-size copy when kr is a compile-time value.
  auto pack = [&](auto kr_const) {
    constexpr int64_t KR = decltype(kr_const)::value;
    parallel_for(blocks, std::max<int64_t>(1, (1 << 18) / std::max<int64_t>(1, nr * kp)), [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t cols = std::min(nr, n - b * nr), full = k / KR;
        int8_t* dst = p.data.data() + b * nr * kp;
        for (int64_t g = 0; g < full; ++g, dst += nr * KR)
          for (int64_t j = 0; j < cols; ++j) std::memcpy(dst + j * KR, w + (b * nr + j) * ldw + g * KR, KR);
        for (int64_t j = 0; j < cols && full * KR < k; ++j)  // the partial last group; the rest stays zero
          std::memcpy(dst + j * KR, w + (b * nr + j) * ldw + full * KR, static_cast<size_t>(k - full * KR));
        for (int64_t j = 0; j < cols; ++j) {
          const int8_t* src = w + (b * nr + j) * ldw;
          int32_t sum = 0;
          for (int64_t kk = 0; kk < k; ++kk) sum += src[kk];
          p.col_sum[b * nr + j] = sum;
        }
      }
    });
  };
  switch (kr) {
    case 1: pack(std::integral_constant<int64_t, 1>{}); break;
    case 2: pack(std::integral_constant<int64_t, 2>{}); break;
    case 4: pack(std::integral_constant<int64_t, 4>{}); break;
    case 8: pack(std::integral_constant<int64_t, 8>{}); break;
    default: throw ValueError("internal: qgemm packing supports kr in {1, 2, 4, 8}");
  }
  return p;
}

namespace {

// One activation row: dst[i] = (src[i] ^ flip) ^ store_flip, zero-extended
// to A; returns the row sum of src[i] ^ flip (the uint8 view of the codes).
template <class A>
uint32_t copy_row(const uint8_t* src, int64_t k, uint8_t flip, uint8_t store_flip, A* dst) {
  uint32_t s = 0;
  for (int64_t i = 0; i < k; ++i) {
    uint8_t v = static_cast<uint8_t>(src[i] ^ flip);
    dst[i] = static_cast<A>(static_cast<uint8_t>(v ^ store_flip));
    s += v;
  }
  return s;
}

#if defined(__x86_64__)
// The same with AVX2: vpsadbw sums 32 bytes per step (the compiler's own
// vectorization of the loop above widens every byte to 32 bits for the sum).
// The last partial step goes through a 32-byte buffer whose padding holds
// `flip`, so it adds 0 to the sum. Rows shorter than 32 take the plain loop
// (which the compiler vectorizes 16 wide): per row, the buffer's set-up cost
// more than it saved at K = 9.
template <class A>
__attribute__((target("avx2"), always_inline)) inline void copy32_avx2(const uint8_t* src, __m256i f, __m256i sf,
                                                                      __m256i& acc, A* dst) {
  __m256i v = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)), f);
  acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, _mm256_setzero_si256()));
  __m256i out = _mm256_xor_si256(v, sf);
  if constexpr (sizeof(A) == 2) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_cvtepu8_epi16(_mm256_castsi256_si128(out)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 16), _mm256_cvtepu8_epi16(_mm256_extracti128_si256(out, 1)));
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), out);
  }
}

template <class A>
__attribute__((target("avx2"), always_inline)) inline uint32_t copy_row_avx2(const uint8_t* src, int64_t k,
                                                                            uint8_t flip, uint8_t store_flip, A* dst) {
  const __m256i f = _mm256_set1_epi8(static_cast<char>(flip)), sf = _mm256_set1_epi8(static_cast<char>(store_flip));
  __m256i acc = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 32 <= k; i += 32) copy32_avx2(src + i, f, sf, acc, dst + i);
  if (i < k) {
    alignas(32) uint8_t in[32];
    alignas(32) A out[32];
    std::memset(in, flip, sizeof in);
    std::memcpy(in, src + i, static_cast<size_t>(k - i));
    copy32_avx2(in, f, sf, acc, out);
    std::memcpy(dst + i, out, static_cast<size_t>(k - i) * sizeof(A));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  return static_cast<uint32_t>(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
}
#endif

// Activation rows [lo, hi) into `panel` (row lo first), K padded to kp and
// rows past M filled with zeros; int8 activations enter as uint8 with the
// sign bit flipped (x + 128), and the row sums of those uint8 values
// (row_sum[r - lo]) feed the correction for zw. The row loop is instantiated
// per copy routine, so the AVX2 one inlines (a call per row cost a quarter of
// a K = 9 product).
#define LUCID_PACK_ROWS_BODY(COPY)                                                                     \
  const uint8_t flip = p.x_signed ? 0x80 : 0;                                                        \
  const uint8_t store_flip = minus128 ? 0x80 : 0; /* the panel holds xu - 128 as int8 bytes */       \
  for (int64_t r = lo; r < hi; ++r) {                                                                \
    A* dst = panel + (r - lo) * kp;                                                                  \
    if (r < p.m)                                                                                     \
      row_sum[r - lo] = COPY(static_cast<const uint8_t*>(p.x) + r * p.ldx, k, flip, store_flip, dst); \
    else                                                                                             \
      std::fill(dst, dst + k, A{0});                                                                 \
    std::fill(dst + k, dst + kp, A{0});                                                              \
  }

template <class A>
void pack_rows_scalar(const QGemmParams& p, int64_t lo, int64_t hi, int64_t kp, int64_t k, A* panel,
                      uint32_t* row_sum, bool minus128) {
  LUCID_PACK_ROWS_BODY(copy_row)
}
#if defined(__x86_64__)
template <class A>
__attribute__((target("avx2"))) void pack_rows_avx2(const QGemmParams& p, int64_t lo, int64_t hi, int64_t kp,
                                                    int64_t k, A* panel, uint32_t* row_sum, bool minus128) {
  LUCID_PACK_ROWS_BODY(copy_row_avx2)
}
#endif
#undef LUCID_PACK_ROWS_BODY

template <class A>
void pack_rows(const QGemmParams& p, int64_t lo, int64_t hi, int64_t kp, int64_t k, A* panel, uint32_t* row_sum,
               bool minus128) {
#if defined(__x86_64__)
  static const bool avx2 = cpu_has_avx2();
  if (avx2 && k >= 32) return pack_rows_avx2(p, lo, hi, kp, k, panel, row_sum, minus128);  // short rows: see below
#endif
  pack_rows_scalar(p, lo, hi, kp, k, panel, row_sum, minus128);
}

// acc = raw + col_term[n] - zw[n] * row_sum[m], all mod 2^32: the true value
// lies in int32 (the ops layer bounds K), so wrapping intermediate terms
// cancel exactly. Then the output formula of docs/numerics.md.
struct Epilogue {
  const QGemmParams& p;
  const uint32_t* col_term;  // bias[n] - zxu * col_sum[n] + K * zxu * zw[n]
  const uint32_t* zw;
  bool any_zw = true;  // false: every zw[n] is 0 and the row-sum term vanishes

  // A whole register tile (rows x nc, raw row stride nr) per call: the
  // clone-dispatched functions below are indirect calls, too costly per row.
  struct Tile {
    const int32_t* raw;
    int rows, nc, nr;
    const uint32_t* rs;  // row sums of the tile's rows
    const uint32_t *ct, *zw;
    const float* scale;
    float zy, lo, hi;
    int64_t ldo;
  };

  // Each body walks the tile row by row; the row loop's operands are
  // restrict-qualified locals so the stores cannot be assumed to alias them
  // and the column loop vectorizes.
  template <class Q, class F>
  __attribute__((always_inline)) static inline void each_row(const Tile& t, Q* out, F&& store_row) {
    for (int i = 0; i < t.rows; ++i, out += t.ldo) store_row(t.raw + i * t.nr, t.rs[i], out);
  }
  template <class Q>
  __attribute__((always_inline)) static inline void requant(const Tile& t, Q* out) {
    const int nc = t.nc;
    const uint32_t* __restrict ct = t.ct;
    const uint32_t* __restrict zw = t.zw;
    const float* __restrict mult = t.scale;
    const float zy = t.zy, lo = t.lo, hi = t.hi;
    each_row(t, out, [&](const int32_t* __restrict raw, uint32_t rs, Q* __restrict q) {
      for (int j = 0; j < nc; ++j) {
        int32_t a = static_cast<int32_t>(static_cast<uint32_t>(raw[j]) + ct[j] - zw[j] * rs);
        float x = static_cast<float>(a) * mult[j];
        float r = std::nearbyint(x);
        float v = r + zy;
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        q[j] = static_cast<Q>(static_cast<int32_t>(v));
      }
    });
  }
  LUCID_EPILOGUE_CLONES static void store_i32(const Tile& t, int32_t* out) {
    const int nc = t.nc;
    const uint32_t* __restrict ct = t.ct;
    const uint32_t* __restrict zw = t.zw;
    each_row(t, out, [&](const int32_t* __restrict raw, uint32_t rs, int32_t* __restrict q) {
      for (int j = 0; j < nc; ++j) q[j] = static_cast<int32_t>(static_cast<uint32_t>(raw[j]) + ct[j] - zw[j] * rs);
    });
  }
  LUCID_EPILOGUE_CLONES static void store_f32(const Tile& t, float* out) {
    const int nc = t.nc;
    const uint32_t* __restrict ct = t.ct;
    const uint32_t* __restrict zw = t.zw;
    const float* __restrict sc = t.scale;
    each_row(t, out, [&](const int32_t* __restrict raw, uint32_t rs, float* __restrict y) {
      for (int j = 0; j < nc; ++j)
        y[j] = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(raw[j]) + ct[j] - zw[j] * rs)) * sc[j];
    });
  }
  LUCID_EPILOGUE_CLONES static void requant_s8(const Tile& t, int8_t* q) { requant(t, q); }
  LUCID_EPILOGUE_CLONES static void requant_u8(const Tile& t, uint8_t* q) { requant(t, q); }
  LUCID_EPILOGUE_CLONES static void requant_s32(const Tile& t, int32_t* q) { requant(t, q); }

#if defined(__x86_64__)
  // The same operations 16 lanes at a time (AVX-512F/BW/VL, which every AVX-512
  // VNNI CPU has): the int32 corrections in wrapping adds and multiplies, then
  // the float steps of store_requant16. Masked lanes cover the last columns.
  template <class Q, bool RS>
  __attribute__((target("avx512f,avx512bw,avx512vl"))) static void epilogue_avx512(const Tile& t, Q* out) {
    // Locals: byte stores may alias anything, so fields read in the loop would
    // be reloaded after every store. Columns outer: a column vector's terms and
    // scales are loaded once for the tile's rows.
    const int rows = t.rows, nc = t.nc, nr = t.nr;
    const int64_t ldo = t.ldo;
    const int32_t* raw = t.raw;
    const uint32_t* rsum = t.rs;
    const __m512 zy = _mm512_set1_ps(t.zy), lo = _mm512_set1_ps(t.lo), hi = _mm512_set1_ps(t.hi);
    for (int j = 0; j < nc; j += 16) {
      const __mmask16 m = nc - j >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (nc - j)) - 1u);
      const __m512i ct = _mm512_maskz_loadu_epi32(m, t.ct + j);
      const __m512i zw = RS ? _mm512_maskz_loadu_epi32(m, t.zw + j) : _mm512_setzero_si512();
      const __m512 sc = _mm512_maskz_loadu_ps(m, t.scale + j);
      Q* o = out + j;
      for (int i = 0; i < rows; ++i, o += ldo) {
        __m512i a = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, raw + i * nr + j), ct);
        if (RS) a = _mm512_sub_epi32(a, _mm512_mullo_epi32(zw, _mm512_set1_epi32(static_cast<int32_t>(rsum[i]))));
        store_requant16(a, sc, zy, lo, hi, m, o);
      }
    }
  }
  template <class Q>
  static void epilogue_avx512(const Tile& t, Q* out, bool rs) {
    if (rs) epilogue_avx512<Q, true>(t, out);
    else epilogue_avx512<Q, false>(t, out);
  }
#endif

  // Byte outputs of one tile straight into NCHW planes: row i's pixel is at
  // dst[i] in its image's plane 0, column n's plane P bytes further on. The
  // tile is requantized into a small row-major buffer by the same code as tile()
  // and then reordered; eight consecutive pixels of one image (`run`) go through
  // an SSE2 8 x 16 byte transpose, other tiles byte by byte.
  void tile_nchw(const int32_t* raw, int rows, int nr, int64_t n0, int nc, const uint32_t* rs, uint8_t* const* dst,
                 int64_t P, bool run) const {
    alignas(64) uint8_t qb[16 * 64];
    const int64_t ldq = 64;
    Tile t{raw, rows, nc, nr, rs, col_term + n0, zw + n0, p.scale + n0, p.zy, p.lo, p.hi, ldq};
#if defined(__x86_64__)
    static const bool avx512 = cpu_has_avx512vnni();
    if (avx512) {
      if (p.out_kind == QOut::Int8) epilogue_avx512(t, reinterpret_cast<int8_t*>(qb), any_zw);
      else epilogue_avx512(t, qb, any_zw);
    } else
#endif
    {
      if (p.out_kind == QOut::Int8) requant_s8(t, reinterpret_cast<int8_t*>(qb));
      else requant_u8(t, qb);
    }
#if defined(__SSE2__)
    // Runs of rows whose pixels are consecutive in one plane: one run of eight is
    // the common tile; a tile across two images, or a tail, has two or one short ones.
    int run_start[16], run_len[16], runs = 0;
    for (int i = 0; i < rows; ++i) {
      if (i > 0 && dst[i] == dst[i - 1] + 1) ++run_len[runs - 1];
      else run_start[runs] = i, run_len[runs] = 1, ++runs;
    }
    const bool whole = run && rows == 8 && runs == 1;
    if (rows <= 8) {
      alignas(16) uint8_t tb[16 * 16];
      for (int c0 = 0; c0 < nc; c0 += 16) {
        __m128i a[8], b[8], c[8];
        for (int i = 0; i < 8; ++i) a[i] = _mm_load_si128(reinterpret_cast<const __m128i*>(qb + i * ldq + c0));
        for (int i = 0; i < 4; ++i) {  // b[2i], b[2i+1]: rows 2i, 2i+1 interleaved, columns 0-7 / 8-15
          b[2 * i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
          b[2 * i + 1] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
        }
        for (int h = 0; h < 2; ++h) {  // c[4h + q]: rows 4h..4h+3, column quad q
          c[4 * h] = _mm_unpacklo_epi16(b[4 * h], b[4 * h + 2]);
          c[4 * h + 1] = _mm_unpackhi_epi16(b[4 * h], b[4 * h + 2]);
          c[4 * h + 2] = _mm_unpacklo_epi16(b[4 * h + 1], b[4 * h + 3]);
          c[4 * h + 3] = _mm_unpackhi_epi16(b[4 * h + 1], b[4 * h + 3]);
        }
        for (int q = 0; q < 4; ++q) {  // columns 4q..4q+3, all eight rows, two per register
          const __m128i lo = _mm_unpacklo_epi32(c[q], c[4 + q]), hi = _mm_unpackhi_epi32(c[q], c[4 + q]);
          const __m128i cols[2] = {lo, hi};
          for (int k = 0; k < 2; ++k) {
            const int j = c0 + 4 * q + 2 * k;
            if (whole) {
              if (j < nc) _mm_storel_epi64(reinterpret_cast<__m128i*>(dst[0] + (n0 + j) * P), cols[k]);
              if (j + 1 < nc)
                _mm_storel_epi64(reinterpret_cast<__m128i*>(dst[0] + (n0 + j + 1) * P), _mm_unpackhi_epi64(cols[k], cols[k]));
            } else {  // column j's eight bytes at tb[(j - c0) * 16], then copied run by run
              _mm_storeu_si128(reinterpret_cast<__m128i*>(tb + (j - c0) * 16), cols[k]);
              _mm_storeu_si128(reinterpret_cast<__m128i*>(tb + (j - c0 + 1) * 16), _mm_unpackhi_epi64(cols[k], cols[k]));
            }
          }
        }
        if (!whole)
          for (int j = c0; j < std::min(nc, c0 + 16); ++j)
            for (int r = 0; r < runs; ++r)
              std::memcpy(dst[run_start[r]] + (n0 + j) * P, tb + (j - c0) * 16 + run_start[r],
                          static_cast<size_t>(run_len[r]));
      }
      return;
    }
#endif
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < nc; ++j) dst[i][(n0 + j) * P] = qb[i * ldq + j];
  }

  void tile(const int32_t* raw, int rows, int nr, int64_t m0, int64_t n0, int nc, const uint32_t* rs) const {
    Tile t{raw, rows, nc, nr, rs, col_term + n0, zw + n0, p.scale ? p.scale + n0 : nullptr, p.zy, p.lo, p.hi, p.ldo};
    const int64_t at = m0 * p.ldo + n0;
#if defined(__x86_64__)
    static const bool avx512 = cpu_has_avx512vnni();
    if (avx512) {
      switch (p.out_kind) {
        case QOut::Int32: break;
        case QOut::Float: return epilogue_avx512(t, static_cast<float*>(p.out) + at, any_zw);
        case QOut::Int8: return epilogue_avx512(t, static_cast<int8_t*>(p.out) + at, any_zw);
        case QOut::UInt8: return epilogue_avx512(t, static_cast<uint8_t*>(p.out) + at, any_zw);
        case QOut::Requant32: return epilogue_avx512(t, static_cast<int32_t*>(p.out) + at, any_zw);
      }
    }
#endif
    switch (p.out_kind) {
      case QOut::Int32: store_i32(t, static_cast<int32_t*>(p.out) + at); break;
      case QOut::Float: store_f32(t, static_cast<float*>(p.out) + at); break;
      case QOut::Int8: requant_s8(t, static_cast<int8_t*>(p.out) + at); break;
      case QOut::UInt8: requant_u8(t, static_cast<uint8_t*>(p.out) + at); break;
      case QOut::Requant32: requant_s32(t, static_cast<int32_t*>(p.out) + at); break;
    }
  }
};

}  // namespace

LUCID_EPILOGUE_CLONES static uint8_t or_bytes(const uint8_t* x, int64_t n) {
  uint8_t acc = 0;
  for (int64_t i = 0; i < n; ++i) acc |= x[i];
  return acc;
}
LUCID_EPILOGUE_CLONES static uint8_t and_bytes(const uint8_t* x, int64_t n) {
  uint8_t acc = 0xff;
  for (int64_t i = 0; i < n; ++i) acc &= x[i];
  return acc;
}

bool activations_below_128(const void* x, bool x_signed, int64_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(x);
  // uint8: no top bit set anywhere; int8: x + 128 < 128 means every x < 0.
  return x_signed ? (n == 0 || (and_bytes(b, n) & 0x80) != 0) : (or_bytes(b, n) & 0x80) == 0;
}

// ------------------------------------------------------------------ driver --

namespace {

// The product is cut into tasks, rectangles of whole register tiles: m_parts
// row ranges x n_parts column ranges. Each range is at most a cache block
// (rows whose activation panel stays in L1/L2, columns whose packed weights
// stay in L2); with several threads the cut is refined until every thread has
// work and the task count is a multiple of the thread count, since a few big
// tasks over two threads leave one idle at the end (3 blocks of a 256-row
// product ran as 2 + 1, a 64-row one was a single block).
struct Partition {
  int64_t m_parts, n_parts;
  int64_t threads;  // threads worth using: at most the pool's, one per kMinThreadWork
};

// Multiply-adds per thread below which another thread is not worth waking
// (~50 us of work: a sleeping pool thread starts ~5-90 us late, and a
// 1 x 1024 x 1024 product ran 1.3-1.7x slower on 2 threads than on 1), and
// the smallest task the cut below makes (~15 us).
constexpr int64_t kMinThreadWork = int64_t{1} << 21;
constexpr int64_t kMinTaskWork = int64_t{1} << 19;

Partition partition(int64_t m_tiles, int64_t n_tiles, int64_t mc_tiles, int64_t nc_tiles, int64_t work) {
  const int64_t threads = std::min<int64_t>(get_num_threads(), std::max<int64_t>(1, work / kMinThreadWork));
  Partition pt{(m_tiles + mc_tiles - 1) / mc_tiles, (n_tiles + nc_tiles - 1) / nc_tiles, threads};
  if (threads <= 1) return pt;
  // Refine the dimension with more tiles per part (rows first on a tie: a
  // column cut makes each part pack the same activation rows again).
  // Aim at several tasks per thread (as work allows): a thread woken late
  // then finds tasks left to take instead of one half of the product.
  const int64_t target = std::max(threads, std::min(4 * threads, work / kMinTaskWork) / threads * threads);
  auto tasks = [&] { return pt.m_parts * pt.n_parts; };
  while (tasks() < target || (tasks() < 8 * threads && tasks() % threads != 0)) {
    const bool can_m = pt.m_parts < m_tiles, can_n = pt.n_parts < n_tiles;
    if (!can_m && !can_n) break;
    const bool by_m = can_m && (!can_n || m_tiles * pt.n_parts >= n_tiles * pt.m_parts);
    ++(by_m ? pt.m_parts : pt.n_parts);
  }
  return pt;
}

// Part i of `parts` equal shares of `tiles` tiles starts at this tile.
int64_t share(int64_t tiles, int64_t parts, int64_t i) { return tiles * i / parts; }

// The product's cut into tasks: cache blocks of MC rows of activations (MC x kp
// panel elements of `a_bytes` in L1/L2) streaming past NC columns of packed
// weights (NC x kp bytes in L2), refined by partition(); `grain` as the pool
// hands them out (all threads: one task at a time, as threads come free; fewer,
// for a small product: one chunk per thread worth waking, one inline).
struct Plan {
  int64_t m_tiles, n_tiles;
  Partition pt;
  int64_t n_tasks, grain;
};

// The thresholds above count multiply-adds at the vector kernels' speed. A
// 32 x 32 AMX tile does them several times faster (bench/qgemm.py, Intel Xeon
// with AMX, one thread: 1.3-1.8 TOP/s from 256 rows up), so a product that
// earns a second thread by its count was over before the thread woke: with the
// raw count, 64 x 256 x 256 took 31-56 us on two threads against 16 on one,
// 256^3 45-54 against 34. Counting AMX products at 1/8 runs those on one
// thread, and converted ResNet-18 on two threads went from 2.61-2.67 to
// 2.39-2.40 ms at batch 1 (15.6-16.9 to 15.1-15.7 at batch 16). Not
// understood: in the same sequence of shapes 1024 x 256 x 256, whose
// partition the factor does not change, went from 82-94 to 109-122 us.
int64_t thread_work(const QGemmKernel& kern, int64_t madds) {
  return kern.mr * kern.nr >= 1024 ? madds / 8 : madds;
}

// kc: the K extent of a cache block (kp, or a K block's length when K is cut).
Plan plan(const QGemmKernel& kern, int64_t M, int64_t N, int64_t K, int64_t kc, int64_t a_bytes) {
  const int64_t mr = kern.mr, nr = kern.nr;
  const int64_t m_tiles = (M + mr - 1) / mr, n_tiles = (N + nr - 1) / nr;
  const int64_t mc_tiles = std::max<int64_t>(1, 64 * 1024 / std::max<int64_t>(kc * a_bytes * mr, 1));
  const int64_t nc_tiles = std::max<int64_t>(1, 128 * 1024 / std::max<int64_t>(kc * nr, 1));
  const Partition pt =
      partition(m_tiles, n_tiles, mc_tiles, nc_tiles, thread_work(kern, M * N * std::max<int64_t>(K, 1)));
  const int64_t n_tasks = pt.m_parts * pt.n_parts;
  const int64_t grain = pt.threads >= get_num_threads() ? 1 : (n_tasks + pt.threads - 1) / pt.threads;
  return {m_tiles, n_tiles, pt, n_tasks, grain};
}

// The K block length of qgemm. Whole-K cache blocks shrink as K grows: at
// K = 4096 a task was 16 rows x 32 columns, and each row part streamed all the
// weights from memory again (1024 x 4096 x 4096 ran at 0.66x fbgemm). Past
// kMaxKc the product runs in K blocks of at most kMaxKc (multiples of kpad)
// whose raw int32 sums add up in a per-task accumulator before the epilogue:
// the sums are exact (wrapping), so no code can change. A kMaxKc x 32 weight
// slice (32 KB) stays in L1 while a row tile meets it.
constexpr int64_t kMaxKc = 1024;
int64_t k_block(int64_t kp, int64_t kpad) {
  if (kp <= kMaxKc) return kp;
  const int64_t blocks = (kp + kMaxKc - 1) / kMaxKc;
  return round_up((kp + blocks - 1) / blocks, kpad);
}

// c += t, n sums, in wrapping int32 arithmetic (as the kernels' own sums).
LUCID_EPILOGUE_CLONES void add_sums(int32_t* __restrict c, const int32_t* __restrict t, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = static_cast<int32_t>(static_cast<uint32_t>(c[i]) + static_cast<uint32_t>(t[i]));
}

// Per-column terms of the correction, in wrapping uint32 arithmetic:
// col_term[n] = bias[n] - zxu * col_sum[n] + K * zxu * zw[n]. True when some
// zw[n] is not 0 (otherwise the row-sum term of the epilogue vanishes).
bool column_terms(const QPackedWeights& w, const QGemmParams& p, std::vector<uint32_t>& col_term,
                  std::vector<uint32_t>& zw) {
  const QGemmKernel& kern = *w.kernel;
  const int64_t N = w.n, K = w.k;
  const uint32_t zxu = static_cast<uint32_t>(p.x_signed ? p.zx + 128 : p.zx);
  col_term.resize(static_cast<size_t>(N));
  zw.resize(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) {
    zw[n] = static_cast<uint32_t>(p.zw[n]);
    uint32_t t = static_cast<uint32_t>(K) * zxu * zw[n] - zxu * static_cast<uint32_t>(w.col_sum[n]);
    // A panel of xu - 128 gives raw - 128 * col_sum; padding zeros are real
    // zeros there too, since padded weights are zero.
    if (kern.a_minus128) t += 128u * static_cast<uint32_t>(w.col_sum[n]);
    col_term[n] = t + (p.bias ? static_cast<uint32_t>(p.bias[n]) : 0u);
  }
  bool any_zw = false;
  for (int64_t n = 0; n < N; ++n) any_zw |= zw[n] != 0;
  return any_zw;
}

// The activation rows of the task this thread last ran: consecutive tasks of
// one call on the same rows (a column cut) pack them once. Kept per thread,
// grown, never shrunk.
struct RowPanel {
  uint64_t call = 0;
  int64_t m0 = -1, m1 = -1;
  std::vector<int16_t> a16;
  std::vector<uint8_t> a8;
  std::vector<uint32_t> row_sum;
};
thread_local RowPanel t_rows;
// A K-blocked task's int32 sums, register tile by register tile.
thread_local std::vector<int32_t> t_acc;
std::atomic<uint64_t> g_calls{0};

}  // namespace

void qgemm(const QPackedWeights& w, const QGemmParams& p) {
  const QGemmKernel& kern = *w.kernel;
  const int64_t M = p.m, N = w.n, K = w.k, kp = w.kp, mr = kern.mr, nr = kern.nr;
  if (M == 0 || N == 0) return;
  const size_t elem = kern.a_int16 ? 2 : 1;
  const uint64_t call = g_calls.fetch_add(1) + 1;

  std::vector<uint32_t> col_term, zw;
  const bool any_zw = column_terms(w, p, col_term, zw);
  Epilogue epi{p, col_term.data(), zw.data(), any_zw};
  const int64_t kc = k_block(kp, kern.kpad);
  const Plan pl = plan(kern, M, N, K, kc, static_cast<int64_t>(elem));
  const int64_t m_tiles = pl.m_tiles, n_tiles = pl.n_tiles;
  const Partition& pt = pl.pt;

  constexpr int64_t kMaxTile = 16 * 64;
  if (mr * nr > kMaxTile) throw ValueError("internal: qgemm register tile larger than 16 x 64");
  // Tasks in row-part-major order: the pool hands each thread a run of
  // consecutive tasks, which then share their activation rows.
  parallel_for(pl.n_tasks, pl.grain, [&](int64_t lo, int64_t hi) {
    RowPanel& rp = t_rows;
    alignas(64) int32_t tile[kMaxTile];
    for (int64_t task = lo; task < hi; ++task) {
      const int64_t mi = task / pt.n_parts, ni = task % pt.n_parts;
      const int64_t m0 = share(m_tiles, pt.m_parts, mi) * mr, m1 = share(m_tiles, pt.m_parts, mi + 1) * mr;
      const int64_t n_lo = share(n_tiles, pt.n_parts, ni) * nr;
      const int64_t n_hi = std::min(N, share(n_tiles, pt.n_parts, ni + 1) * nr);
      if (m0 == m1 || n_lo >= n_hi) continue;
      // This task's activation rows, padded to whole tiles with zeros.
      if (rp.call != call || rp.m0 != m0 || rp.m1 != m1) {
        const size_t need = static_cast<size_t>((m1 - m0) * kp);
        if (rp.row_sum.size() < static_cast<size_t>(m1 - m0)) rp.row_sum.resize(static_cast<size_t>(m1 - m0));
        if (kern.a_int16) {
          if (rp.a16.size() < need) rp.a16.resize(need);
          pack_rows(p, m0, m1, kp, K, rp.a16.data(), rp.row_sum.data(), false);
        } else {
          if (rp.a8.size() < need) rp.a8.resize(need);
          pack_rows(p, m0, m1, kp, K, rp.a8.data(), rp.row_sum.data(), kern.a_minus128);
        }
        rp.call = call, rp.m0 = m0, rp.m1 = m1;
      }
      const char* panel = kern.a_int16 ? reinterpret_cast<const char*>(rp.a16.data())
                                       : reinterpret_cast<const char*>(rp.a8.data());
      // K blocks outer: a block's weight slices for the task's columns stay in
      // L2 across its row tiles. One block (kc = kp) needs no accumulator.
      const int64_t tn = (n_hi - n_lo + nr - 1) / nr;
      int32_t* acc = nullptr;
      if (kc < kp) {
        const size_t need = static_cast<size_t>((m1 - m0) / mr * tn * mr * nr);
        if (t_acc.size() < need) t_acc.resize(need);
        acc = t_acc.data();
      }
      for (int64_t k0 = 0; k0 < kp; k0 += kc) {
        const int64_t kl = std::min(kc, kp - k0);
        const bool first = k0 == 0, last = k0 + kl == kp;
        for (int64_t r0 = m0; r0 < m1 && r0 < M; r0 += mr) {
          const int rows = static_cast<int>(std::min(mr, M - r0));
          const char* a = panel + ((r0 - m0) * kp + k0) * static_cast<int64_t>(elem);
          for (int64_t n0 = n_lo; n0 < n_hi; n0 += nr) {
            int32_t* c = acc ? acc + (((r0 - m0) / mr) * tn + (n0 - n_lo) / nr) * mr * nr : tile;
            kern.ukernel(rows, static_cast<size_t>(kl), a, static_cast<size_t>(kp), w.data.data() + n0 * kp + k0 * nr,
                         first ? c : tile);
            if (!first) add_sums(c, tile, rows * nr);
            if (!last) continue;
            const int cols = static_cast<int>(std::min(nr, N - n0));
            epi.tile(c, rows, static_cast<int>(nr), r0, n0, cols, rp.row_sum.data() + (r0 - m0));
          }
        }
      }
    }
  });
}


namespace {

// A row tile's windows into the gathered panel: row i's segment s (seglen
// bytes at rows[i] + s * seg_stride) to panel + i * kp + s * seglen. The
// segments are short (3 * C bytes for a 3x3 window), so a memcpy call per
// segment cost more than the copy: in converted ResNet-18 at batch 16 on an
// AMX Xeon the calls took 12% of the forward pass (the AMX kernel 43%), and
// the inline copy below made the pass 5-9% faster. It is still ~12%: perf
// puts the time on its loads, and neither prefetching the next row tile's
// windows nor alternating two panels changed it.
void gather_scalar(int rows_n, const uint8_t* const* rows, int64_t nseg, int64_t seglen, int64_t seg_stride,
                   uint8_t* panel, int64_t kp) {
  for (int i = 0; i < rows_n; ++i)
    for (int64_t s = 0; s < nseg; ++s)
      std::memcpy(panel + i * kp + s * seglen, rows[i] + s * seg_stride, static_cast<size_t>(seglen));
}
#if defined(__x86_64__)
// The same in 64-byte steps, the last one masked (AVX-512BW: every CPU with
// AVX-512 VNNI, AMX ones included, has it).
__attribute__((target("avx512f,avx512bw"))) void gather_avx512(int rows_n, const uint8_t* const* rows, int64_t nseg,
                                                                int64_t seglen, int64_t seg_stride, uint8_t* panel,
                                                                int64_t kp) {
  const int64_t full = seglen & ~int64_t{63};
  const __mmask64 tail = seglen == full ? 0 : ~__mmask64{0} >> (64 - (seglen - full));
  for (int i = 0; i < rows_n; ++i) {
    uint8_t* d = panel + i * kp;
    for (int64_t s = 0; s < nseg; ++s, d += seglen) {
      const uint8_t* src = rows[i] + s * seg_stride;
      for (int64_t b = 0; b < full; b += 64) _mm512_storeu_si512(d + b, _mm512_loadu_si512(src + b));
      if (tail) _mm512_mask_storeu_epi8(d + full, tail, _mm512_maskz_loadu_epi8(tail, src + full));
    }
  }
}
#endif

void gather(int rows_n, const uint8_t* const* rows, int64_t nseg, int64_t seglen, int64_t seg_stride, uint8_t* panel,
            int64_t kp) {
#if defined(__x86_64__)
  static const bool avx512 = cpu_has_avx512vnni();
  if (avx512) return gather_avx512(rows_n, rows, nseg, seglen, seg_stride, panel, kp);
#endif
  gather_scalar(rows_n, rows, nseg, seglen, seg_stride, panel, kp);
}

}  // namespace

bool qigemm_supports(const QGemmKernel& kern) { return !kern.a_int16 && !kern.a_minus128; }

bool qigemm_fits(const QPackedWeights& w, const QIGemmGeometry& g) {
  const QGemmKernel& kern = *w.kernel;
  if (!qigemm_supports(kern) || g.seglen <= 0 || g.seglen % kern.kr != 0 || g.nseg * g.seglen != w.k) return false;
  // The indirect form walks the segments to the end of the packed K; a gathered
  // panel is zero-padded up to it.
  return kern.iukernel ? w.kp == w.k : true;
}

void qigemm(const QPackedWeights& w, const QIGemmGeometry& g, const QGemmParams& p) {
  if (!qigemm_fits(w, g)) throw ValueError("internal: qigemm geometry does not fit the kernel");
  if (p.x_signed) throw ValueError("internal: qigemm takes uint8 codes");
  if (g.nchw && (p.out_kind != QOut::UInt8 && p.out_kind != QOut::Int8))
    throw ValueError("internal: qigemm writes NCHW planes of byte codes only");
  const QGemmKernel& kern = *w.kernel;
  const int64_t M = p.m, N = w.n, K = w.k, kp = w.kp, mr = kern.mr, nr = kern.nr;
  constexpr int64_t kMaxTile = 16 * 64, kMaxRows = 32;
  if (mr > kMaxRows || nr > 64 || mr * nr > kMaxTile)
    throw ValueError("internal: qigemm register tile larger than 32 rows, 64 columns or 1024 sums");
  if (M == 0 || N == 0) return;
  std::vector<uint32_t> col_term, zw;
  // Row sums enter only through zw[n] * rowsum: symmetric weights skip them.
  const bool need_rs = column_terms(w, p, col_term, zw);
  Epilogue epi{p, col_term.data(), zw.data(), need_rs};
  const Plan pl = plan(kern, M, N, K, kp, 1);
  const int64_t m_tiles = pl.m_tiles, n_tiles = pl.n_tiles;
  const Partition& pt = pl.pt;
  const int64_t n_tasks = pl.n_tasks, grain = pl.grain;
  // Task order: row parts outer (a run of tasks shares its activation rows) unless
  // the weights are the larger operand and overflow the cache (deep layers of a
  // small batch): then column parts outer, so each weight panel is read from
  // memory once and meets every row part while it is cached.
  const bool columns_outer = N * kp > (int64_t{512} << 10) && N * kp > M * kp;
  // Kernels without the indirect form (AMX: a tile load needs one row stride)
  // get each row tile's windows gathered into an mr x kp panel, once for all
  // its column tiles.
  const bool gather_panel = !kern.iukernel;
  parallel_for(n_tasks, grain, [&](int64_t lo, int64_t hi) {
    alignas(64) int32_t tile[kMaxTile];
    const uint8_t* rows[kMaxRows];
    uint8_t* dst[kMaxRows];
    uint32_t rs[kMaxRows] = {};
    uint8_t* panel = nullptr;
    if (gather_panel) {
      // Zeroed here, so the K padding past nseg * seglen stays zero. A tail
      // tile's rows past rows_n keep earlier rows' codes: the kernel may read
      // them, but their sums are not stored.
      std::vector<uint8_t>& buf = t_rows.a8;
      if (buf.size() < static_cast<size_t>(mr * kp)) buf.assign(static_cast<size_t>(mr * kp), 0);
      else std::memset(buf.data(), 0, static_cast<size_t>(mr * kp));
      t_rows.call = 0;  // qgemm's cached rows are gone
      panel = buf.data();
    }
    for (int64_t task = lo; task < hi; ++task) {
      const int64_t mi = columns_outer ? task % pt.m_parts : task / pt.n_parts;
      const int64_t ni = columns_outer ? task / pt.m_parts : task % pt.n_parts;
      const int64_t m0 = share(m_tiles, pt.m_parts, mi) * mr, m1 = std::min(M, share(m_tiles, pt.m_parts, mi + 1) * mr);
      const int64_t n_lo = share(n_tiles, pt.n_parts, ni) * nr;
      const int64_t n_hi = std::min(N, share(n_tiles, pt.n_parts, ni + 1) * nr);
      if (m0 >= m1 || n_lo >= n_hi) continue;
      int64_t img = m0 / g.P, q = m0 % g.P, oy = q / g.ow, ox = q % g.ow;  // stepped, not divided, per row
      for (int64_t r0 = m0; r0 < m1; r0 += mr) {
        const int rows_n = static_cast<int>(std::min(mr, m1 - r0));
        const int64_t img0 = img;
        for (int i = 0; i < rows_n; ++i) {
          rows[i] = g.base + img * g.image_stride + oy * g.row_step + ox * g.col_step;
          if (g.nchw) dst[i] = g.nchw + img * g.nchw_image_stride + oy * g.ow + ox;
          if (need_rs) {
            uint32_t sum = 0;
            for (int64_t sgm = 0; sgm < g.nseg; ++sgm) {
              const uint8_t* sp = rows[i] + sgm * g.seg_stride;
              for (int64_t t = 0; t < g.seglen; ++t) sum += sp[t];
            }
            rs[i] = sum;
          }
          if (++ox == g.ow) {
            ox = 0;
            if (++oy * g.ow == g.P) oy = 0, ++img;
          }
        }
        // one image's consecutive pixels (the rows did not cross into the next image)
        const bool run = img == img0 || (img == img0 + 1 && oy == 0 && ox == 0);
        if (gather_panel) gather(rows_n, rows, g.nseg, g.seglen, g.seg_stride, panel, kp);
        for (int64_t n0 = n_lo; n0 < n_hi; n0 += nr) {
          if (gather_panel)
            kern.ukernel(rows_n, static_cast<size_t>(kp), panel, static_cast<size_t>(kp), w.data.data() + n0 * kp, tile);
          else
            kern.iukernel(rows_n, static_cast<size_t>(g.nseg), static_cast<size_t>(g.seglen),
                          static_cast<size_t>(g.seg_stride), rows, w.data.data() + n0 * kp, tile);
          const int cols = static_cast<int>(std::min(nr, N - n0));
          if (g.nchw) {
            // tile_nchw reorders up to 8 rows at a time (its SSE transpose)
            for (int i0 = 0; i0 < rows_n; i0 += 8)
              epi.tile_nchw(tile + i0 * nr, std::min(8, rows_n - i0), static_cast<int>(nr), n0, cols, rs + i0,
                            dst + i0, g.P, run);
          } else {
            epi.tile(tile, rows_n, static_cast<int>(nr), r0, n0, cols, rs);
          }
        }
      }
    }
  });
}

}  // namespace lucid::kernels
