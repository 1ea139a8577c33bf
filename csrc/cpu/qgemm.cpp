// The int8 GEMM driver around the microkernels of cpu/kernels: weight and
// activation packing, cache blocking, threading over M x N tiles on lucid's
// pool, and the fused zero-point correction + bias + requantization epilogue.
// One epilogue serves every kernel, so all engines give the same bits by
// construction once their raw products agree (which tests/kernels checks).
#include "cpu/qgemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/errors.h"
#include "core/thread_pool.h"

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

// Activation panel: rows padded to a multiple of MR, K to kp, with zeros;
// int8 activations enter as uint8 with the sign bit flipped (x + 128), and
// the row sums of those uint8 values feed the correction for zw.
template <class A>
void pack_rows(const QGemmParams& p, int64_t lo, int64_t hi, int64_t kp, int64_t k, A* panel, uint32_t* row_sum,
               bool minus128) {
  const uint8_t flip = p.x_signed ? 0x80 : 0;
  const uint8_t store_flip = minus128 ? 0x80 : 0;  // the panel holds xu - 128 as int8 bytes
  for (int64_t r = lo; r < hi; ++r) {
    A* dst = panel + r * kp;
    uint32_t s = 0;
    if (r < p.m) {
      const uint8_t* src = static_cast<const uint8_t*>(p.x) + r * p.ldx;
      for (int64_t i = 0; i < k; ++i) {
        uint8_t v = static_cast<uint8_t>(src[i] ^ flip);
        dst[i] = static_cast<A>(static_cast<uint8_t>(v ^ store_flip));
        s += v;
      }
      row_sum[r] = s;
    } else {
      std::fill(dst, dst + k, A{0});
    }
    std::fill(dst + k, dst + kp, A{0});
  }
}

// acc = raw + col_term[n] - zw[n] * row_sum[m], all mod 2^32: the true value
// lies in int32 (the ops layer bounds K), so wrapping intermediate terms
// cancel exactly. Then the output formula of docs/numerics.md.
struct Epilogue {
  const QGemmParams& p;
  const uint32_t* col_term;  // bias[n] - zxu * col_sum[n] + K * zxu * zw[n]
  const uint32_t* zw;

  LUCID_EPILOGUE_CLONES static void correct(const int32_t* raw, int nc, uint32_t rs, const uint32_t* ct,
                                            const uint32_t* zw, int32_t* acc) {
    for (int j = 0; j < nc; ++j) acc[j] = static_cast<int32_t>(static_cast<uint32_t>(raw[j]) + ct[j] - zw[j] * rs);
  }
  LUCID_EPILOGUE_CLONES static void to_float(const int32_t* acc, int nc, const float* s, float* y) {
    for (int j = 0; j < nc; ++j) y[j] = static_cast<float>(acc[j]) * s[j];
  }
  // One body, three clone-dispatched instantiations (target_clones does not
  // apply to templates).
  template <class Q>
  __attribute__((always_inline)) static inline void requant(const int32_t* acc, int nc, const float* mult, float zy,
                                                            float lo, float hi, Q* q) {
    for (int j = 0; j < nc; ++j) {
      float t = static_cast<float>(acc[j]) * mult[j];
      float r = std::nearbyint(t);
      float v = r + zy;
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
      q[j] = static_cast<Q>(static_cast<int32_t>(v));
    }
  }
  LUCID_EPILOGUE_CLONES static void requant_s8(const int32_t* a, int nc, const float* m, float zy, float lo, float hi,
                                               int8_t* q) {
    requant(a, nc, m, zy, lo, hi, q);
  }
  LUCID_EPILOGUE_CLONES static void requant_u8(const int32_t* a, int nc, const float* m, float zy, float lo, float hi,
                                               uint8_t* q) {
    requant(a, nc, m, zy, lo, hi, q);
  }
  LUCID_EPILOGUE_CLONES static void requant_s32(const int32_t* a, int nc, const float* m, float zy, float lo,
                                                float hi, int32_t* q) {
    requant(a, nc, m, zy, lo, hi, q);
  }

  void row(const int32_t* raw, int64_t m, int64_t n0, int nc, uint32_t rs) const {
    int32_t acc[64];
    for (int j0 = 0; j0 < nc; j0 += 64) {
      int len = std::min(64, nc - j0);
      int64_t n = n0 + j0;
      correct(raw + j0, len, rs, col_term + n, zw + n, acc);
      char* out = static_cast<char*>(p.out);
      switch (p.out_kind) {
        case QOut::Int32:
          std::memcpy(reinterpret_cast<int32_t*>(out) + m * p.ldo + n, acc, len * sizeof(int32_t));
          break;
        case QOut::Float: to_float(acc, len, p.scale + n, reinterpret_cast<float*>(out) + m * p.ldo + n); break;
        case QOut::Int8:
          requant_s8(acc, len, p.scale + n, p.zy, p.lo, p.hi, reinterpret_cast<int8_t*>(out) + m * p.ldo + n);
          break;
        case QOut::UInt8:
          requant_u8(acc, len, p.scale + n, p.zy, p.lo, p.hi, reinterpret_cast<uint8_t*>(out) + m * p.ldo + n);
          break;
        case QOut::Requant32:
          requant_s32(acc, len, p.scale + n, p.zy, p.lo, p.hi, reinterpret_cast<int32_t*>(out) + m * p.ldo + n);
          break;
      }
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

void qgemm(const QPackedWeights& w, const QGemmParams& p) {
  const QGemmKernel& kern = *w.kernel;
  const int64_t M = p.m, N = w.n, K = w.k, kp = w.kp, mr = kern.mr, nr = kern.nr;
  if (M == 0 || N == 0) return;
  const int64_t Mp = round_up(M, mr);

  // Activation panel and row sums, packed in parallel over rows.
  std::vector<int16_t> a16;
  std::vector<uint8_t> a8;
  std::vector<uint32_t> row_sum(static_cast<size_t>(Mp), 0);
  if (kern.a_int16) a16.resize(static_cast<size_t>(Mp * kp));
  else a8.resize(static_cast<size_t>(Mp * kp));
  parallel_for(Mp, std::max<int64_t>(1, (1 << 16) / kp), [&](int64_t lo, int64_t hi) {
    if (kern.a_int16) pack_rows(p, lo, hi, kp, K, a16.data(), row_sum.data(), false);
    else pack_rows(p, lo, hi, kp, K, a8.data(), row_sum.data(), kern.a_minus128);
  });
  const void* panel = kern.a_int16 ? static_cast<const void*>(a16.data()) : static_cast<const void*>(a8.data());
  const size_t elem = kern.a_int16 ? 2 : 1;

  // Per-column terms of the correction, in wrapping uint32 arithmetic.
  const uint32_t zxu = static_cast<uint32_t>(p.x_signed ? p.zx + 128 : p.zx);
  std::vector<uint32_t> col_term(static_cast<size_t>(N)), zw(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) {
    zw[n] = static_cast<uint32_t>(p.zw[n]);
    uint32_t t = static_cast<uint32_t>(K) * zxu * zw[n] - zxu * static_cast<uint32_t>(w.col_sum[n]);
    // A panel of xu - 128 gives raw - 128 * col_sum; padding zeros are real
    // zeros there too, since padded weights are zero.
    if (kern.a_minus128) t += 128u * static_cast<uint32_t>(w.col_sum[n]);
    col_term[n] = t + (p.bias ? static_cast<uint32_t>(p.bias[n]) : 0u);
  }
  Epilogue epi{p, col_term.data(), zw.data()};

  // Blocks: NC columns whose packed panels (NC x kp bytes) stay in L2 while
  // MC rows of activations stream past them; the pool hands out (nb, mb)
  // pairs in column-block-major order so neighbouring chunks share weights.
  const int64_t nc_blk = std::max<int64_t>(nr, (128 * 1024 / std::max<int64_t>(kp, 1)) / nr * nr);
  const int64_t mc_blk = std::max<int64_t>(mr, (64 * 1024 / std::max<int64_t>(kp * elem, 1)) / mr * mr);
  const int64_t n_blocks = (N + nc_blk - 1) / nc_blk, m_blocks = (Mp + mc_blk - 1) / mc_blk;
  const int64_t work_per_block = mc_blk * nc_blk * kp;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(work_per_block, 1));
  parallel_for(n_blocks * m_blocks, grain, [&](int64_t lo, int64_t hi) {
    std::vector<int32_t> tile(static_cast<size_t>(mr * nr));
    for (int64_t item = lo; item < hi; ++item) {
      int64_t nb = item / m_blocks, mb = item % m_blocks;
      int64_t m_end = std::min(M, (mb + 1) * mc_blk), n_end = std::min(N, (nb + 1) * nc_blk);
      for (int64_t m0 = mb * mc_blk; m0 < m_end; m0 += mr) {
        int rows = static_cast<int>(std::min(mr, m_end - m0));
        const char* a = static_cast<const char*>(panel) + m0 * kp * elem;
        for (int64_t n0 = nb * nc_blk; n0 < n_end; n0 += nr) {
          kern.ukernel(rows, static_cast<size_t>(kp), a, static_cast<size_t>(kp), w.data.data() + n0 * kp,
                       tile.data());
          int cols = static_cast<int>(std::min(nr, N - n0));
          for (int i = 0; i < rows; ++i) epi.row(tile.data() + i * nr, m0 + i, n0, cols, row_sum[m0 + i]);
        }
      }
    }
  });
}

}  // namespace lucid::kernels
