// The group-wise affine format on the CPU stream. group_quantize follows
// docs/numerics.md ("group-wise affine (MLX layout)") float operation by float
// operation: the same steps as MLX's own CPU quantizer, so the words, scales
// and biases equal mlx.core.quantize's on MLX's CPU device bit for bit.
#include "cpu/group_quant.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/blas.h"
#include "cpu/float_grid_simd.h"
#include "cpu/weight_gemv.h"

namespace lucid::cpu {

namespace {

// Non-temporal stores of a float output larger than a last-level cache holds.
bool stream_output(int64_t elements) { return elements * 4 >= (int64_t{32} << 20); }

}  // namespace

// The kernels are cpu/float_grid_simd.h's (the explicit-SIMD table this CPU
// supports; every table computes the same bits): groups tile each row and
// rows are contiguous, so the whole weight is rows * groups groups in order.
bool group_quantize(const float* w, int64_t rows, int64_t K, int group_size, int bits, uint32_t* words,
                    float* scales, float* biases) {
  const int64_t groups = K / group_size, words_per_group = group_size * bits / 32;
  const fgrid::Kernels& k = fgrid::best();
  std::atomic<bool> finite{true};
  parallel_for(rows * groups, 64, [&](int64_t lo, int64_t hi) {
    if (!k.affine_quantize(w + lo * group_size, hi - lo, group_size, bits, words + lo * words_per_group,
                           scales + lo, biases + lo))
      finite.store(false, std::memory_order_relaxed);
  });
  return finite.load();
}

void block_quantize(const float* w, int64_t rows, int64_t K, minifloat::BlockMode mode, uint32_t* words,
                    uint8_t* scales) {
  const int bits = minifloat::block_bits(mode), G = minifloat::block_group(mode);
  const fgrid::Kernels& k = fgrid::best();
  parallel_for(rows, 16, [&](int64_t lo, int64_t hi) {
    k.block_quantize(w + lo * K, hi - lo, K, mode, words + lo * (K * bits / 32), scales + lo * (K / G));
  });
}

void block_dequantize(const uint32_t* words, const uint8_t* scales, int64_t rows, int64_t K,
                      minifloat::BlockMode mode, float* w) {
  const int bits = minifloat::block_bits(mode), G = minifloat::block_group(mode);
  const fgrid::Kernels& k = fgrid::best();
  const bool stream = stream_output(rows * K);
  parallel_for(rows, 16, [&](int64_t lo, int64_t hi) {
    k.block_dequantize(words + lo * (K * bits / 32), scales + lo * (K / G), hi - lo, K, mode, w + lo * K, stream);
  });
}

void group_dequantize(const uint32_t* words, const float* scales, const float* biases, int64_t rows, int64_t K,
                      int group_size, int bits, float* w) {
  const int64_t groups = K / group_size, words_per_group = group_size * bits / 32;
  const fgrid::Kernels& k = fgrid::best();
  const bool stream = stream_output(rows * K);
  parallel_for(rows * groups, 64, [&](int64_t lo, int64_t hi) {
    k.affine_dequantize(words + lo * words_per_group, scales + lo, biases + lo, hi - lo, group_size, bits,
                        w + lo * group_size, stream);
  });
}

// The GEMV / skinny-product form at 2 bits (4 and 8 bits run the weight GEMV
// kernels of cpu/kernels/qfw-gemv.h): y[m, n] = sum_g (scale[n, g] * sum_{k in g} q[n, k] x[m, k] + bias[n, g] * sum_{k in g} x[m, k]),
// reading each packed word once per row of x instead of dequantizing the weight. The
// per-lane accumulators (one per code position of a word) make the code loop a
// vector of shifts, masks, conversions and multiply-adds. Float results, equal to the
// dequantized product within float32 summation tolerance (docs/numerics.md).
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && !defined(__clang__)
#define LUCID_GROUP_GEMV_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LUCID_GROUP_GEMV_CLONES
#endif

namespace {

template <int BITS>
LUCID_GROUP_GEMV_CLONES void group_gemv_rows(const float* __restrict x, const float* __restrict xsum, int64_t M,
                                             int64_t K, const uint32_t* __restrict words,
                                             const float* __restrict scales, const float* __restrict biases,
                                             int64_t n0, int64_t n1, int64_t N, int group_size,
                                             float* __restrict out) {
  constexpr int per_word = 32 / BITS;
  constexpr uint32_t mask = (1u << BITS) - 1u;
  const int64_t groups = K / group_size, words_per_row = K / per_word, wpg = group_size / per_word;
  for (int64_t n = n0; n < n1; ++n) {
    const uint32_t* wrow = words + n * words_per_row;
    for (int64_t m = 0; m < M; ++m) {
      const float* xm = x + m * K;
      float y = 0.0f;
      for (int64_t g = 0; g < groups; ++g) {
        float lanes[per_word] = {};
        const uint32_t* wg = wrow + g * wpg;
        const float* xg = xm + g * group_size;
        for (int64_t i = 0; i < wpg; ++i) {
          const uint32_t w = wg[i];
          for (int j = 0; j < per_word; ++j)
            lanes[j] += static_cast<float>((w >> (j * BITS)) & mask) * xg[i * per_word + j];
        }
        float dot = 0.0f;
        for (int j = 0; j < per_word; ++j) dot += lanes[j];
        y += scales[n * groups + g] * dot + biases[n * groups + g] * xsum[m * groups + g];
      }
      out[m * N + n] = y;
    }
  }
}

}  // namespace

void group_quantized_linear(const float* x, int64_t M, int64_t K, const uint32_t* words, const float* scales,
                            const float* biases, int64_t N, int group_size, int bits, const float* bias, float* out) {
  if (M <= kWeightGemvRows && (bits == 4 || bits == 8)) {  // decode-shaped: the weight GEMV kernels read the words
    // (their bytes: codes little-endian in each word are the nibbles / bytes in
    // memory order of cpu/kernels/qfw-gemv.h's layout)
    const int64_t groups = K / group_size;
    qfw_linear(bits == 4 ? kernels::QfwFormat::Affine4 : kernels::QfwFormat::Affine8, x, M, K,
               reinterpret_cast<const uint8_t*>(words), N, scales, groups, nullptr, group_size, biases, bias, out,
               false);
    return;
  }
  if (M <= kWeightGemvRows && bits == 2) {  // decode-shaped: read the packed words directly
    const int64_t groups = K / group_size;
    std::vector<float> xsum(static_cast<size_t>(M * groups), 0.0f);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t g = 0; g < groups; ++g)
        for (int k = 0; k < group_size; ++k) xsum[m * groups + g] += x[m * K + g * group_size + k];
    parallel_for(N, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, K * M)), [&](int64_t lo, int64_t hi) {
      group_gemv_rows<2>(x, xsum.data(), M, K, words, scales, biases, lo, hi, N, group_size, out);
    });
    if (bias)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) out[m * N + n] += bias[n];
    return;
  }
  // A block of 64 weight rows dequantized (64 x K floats: 256 KiB at K = 1024)
  // is reused by every row of x before the next block: the float weights are
  // never held whole, so the layer keeps its 4-8x smaller footprint.
  constexpr int64_t kBlock = 64;
  std::vector<float> wblock(static_cast<size_t>(std::min(N, kBlock) * K));
  const fgrid::Kernels& dq = fgrid::best();
  for (int64_t n0 = 0; n0 < N; n0 += kBlock) {
    const int64_t n1 = std::min(N, n0 + kBlock);
    // the rows' groups are contiguous: the dequantize_mx kernels (vector tables, chosen at run time)
    const int64_t groups = K / group_size, words_per_row = K * bits / 32;
    dq.affine_dequantize(words + n0 * words_per_row, scales + n0 * groups, biases + n0 * groups, (n1 - n0) * groups,
                         group_size, bits, wblock.data(), false);
    blas::sgemm(false, true, M, n1 - n0, K, 1.0f, x, K, wblock.data(), K, 0.0f, out + n0, N);
  }
  if (bias)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) out[m * N + n] += bias[n];
}

}  // namespace lucid::cpu
