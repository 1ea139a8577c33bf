// Quantized 2-D convolution on the CPU stream (docs/numerics.md, "Quantized
// convolution"). Every path computes the contract's exact int32 sums and runs
// its epilogue operation for operation; they differ in how they reach the codes:
// - GEMM kernels with an indirect form (AVX-512 VNNI) read each output pixel's
//   window rows in place from a padded pixels-by-channels copy of the images
//   (the zero point's code in the border), with no im2col or panel copy; AMX
//   gets a row tile's windows from that copy gathered into one panel;
// - other kernels take an integer im2col of that copy (kh copies of kw * cg
//   bytes per patch), padded with the zero point so padding contributes
//   (zx - zx) * w = 0, then the int8 GEMM of cpu/kernels with its fused epilogue;
// - depthwise convs (one input channel per group) sum each plane's windows
//   directly (3x3 windows with symmetric weights: VNNI dot products of permuted
//   bytes where the CPU has VBMI).
// The product's (pixels, channels) output is then reordered to NCHW. The
// weights are reordered to the patches' (i, j, c) tap order and packed once per
// frozen weight (QConvWeightCache).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/errors.h"
#include "core/thread_pool.h"
#include "cpu/qgemm.h"
#include "cpu/qconv2d.h"

// The depthwise loops vectorize (int32 multiply-adds along an output row, then the
// epilogue's cvtdq2ps, mulps, roundps, addps, min/max): an AVX2 clone chosen at load
// time on x86-64 glibc. Integer sums are exact in any order, and each float step is a
// separately rounded IEEE operation (-ffp-contract=off forbids FMA), so the clones
// give the scalar loop's bits.
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && !defined(__clang__)
#define LUCID_DEPTHWISE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LUCID_DEPTHWISE_CLONES
#endif

namespace lucid::cpu {

namespace {

// dst (cols, rows) = src (rows, cols) transposed, for byte codes. 16 x 16 tiles
// go through SSE2 unpacks (four rounds of interleaving: bytes, pairs, quads,
// halves), ~1/8 of the instructions of a byte at a time. Partial tiles at the
// edges (24 channels are a tile and a half) are staged through a zeroed 16 x 16
// buffer, so they take the same path instead of a strided byte loop.
#if defined(__SSE2__)
// One 16 x 16 tile: rows src[i * ss], i < 16, 16 bytes each -> dst[k * ds], k < 16.
inline void transpose_tile16(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds) {
  __m128i a[16], b[16];
  for (int i = 0; i < 16; ++i) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * ss));
  for (int i = 0; i < 8; ++i) {  // b[2i]: rows 2i, 2i+1 interleaved, columns 0-7; b[2i+1]: 8-15
    b[2 * i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
    b[2 * i + 1] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
  }
  for (int j = 0; j < 4; ++j) {  // a[4j + q]: rows 4j..4j+3, column quad q
    a[4 * j] = _mm_unpacklo_epi16(b[4 * j], b[4 * j + 2]);
    a[4 * j + 1] = _mm_unpackhi_epi16(b[4 * j], b[4 * j + 2]);
    a[4 * j + 2] = _mm_unpacklo_epi16(b[4 * j + 1], b[4 * j + 3]);
    a[4 * j + 3] = _mm_unpackhi_epi16(b[4 * j + 1], b[4 * j + 3]);
  }
  for (int h = 0; h < 2; ++h)  // b[8h + k]: rows 8h..8h+7, columns 2k, 2k+1
    for (int q = 0; q < 4; ++q) {
      b[8 * h + 2 * q] = _mm_unpacklo_epi32(a[8 * h + q], a[8 * h + 4 + q]);
      b[8 * h + 2 * q + 1] = _mm_unpackhi_epi32(a[8 * h + q], a[8 * h + 4 + q]);
    }
  for (int k = 0; k < 8; ++k) {  // column 2k, 2k+1: all 16 rows
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * k) * ds), _mm_unpacklo_epi64(b[k], b[8 + k]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * k + 1) * ds), _mm_unpackhi_epi64(b[k], b[8 + k]));
  }
}
#endif

// dst (cols, rows) = src (rows, cols) transposed, src rows `lds` bytes apart and
// dst rows `ldd` apart (a block of larger matrices).
void transpose_block(const uint8_t* src, int64_t rows, int64_t cols, int64_t lds, uint8_t* dst, int64_t ldd) {
#if defined(__SSE2__)
  alignas(16) uint8_t in[16 * 16], out[16 * 16];
  for (int64_t r0 = 0; r0 < rows; r0 += 16)
    for (int64_t c0 = 0; c0 < cols; c0 += 16) {
      const int64_t rr = std::min<int64_t>(16, rows - r0), cc = std::min<int64_t>(16, cols - c0);
      if (rr == 16 && cc == 16) {
        transpose_tile16(src + r0 * lds + c0, lds, dst + c0 * ldd + r0, ldd);
        continue;
      }
      std::memset(in, 0, sizeof in);
      for (int64_t i = 0; i < rr; ++i) std::memcpy(in + i * 16, src + (r0 + i) * lds + c0, static_cast<size_t>(cc));
      transpose_tile16(in, 16, out, 16);
      for (int64_t k = 0; k < cc; ++k) std::memcpy(dst + (c0 + k) * ldd + r0, out + k * 16, static_cast<size_t>(rr));
    }
#else
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) dst[c * ldd + r] = src[r * lds + c];
#endif
}

void transpose_bytes(const uint8_t* src, int64_t rows, int64_t cols, uint8_t* dst) {
  transpose_block(src, rows, cols, cols, dst, rows);
}

// The channel group of one image as Hp x Wp pixels of cg bytes each (channels
// innermost), its pixels at (ph, pw), bordered by the pad byte, so that every
// window tap lands inside and a window row of kw pixels is kw * cg adjacent
// bytes. `hwc_scratch` holds H * W * cg bytes.
void pad_pixels(const uint8_t* x, int64_t H, int64_t W, int64_t c0, int64_t cg, int64_t Hp, int64_t Wp, int64_t ph,
                int64_t pw, uint8_t pad, uint8_t* padded, uint8_t* hwc_scratch) {
  const uint8_t* hwc = x + c0 * H * W;  // one channel: CHW is already HWC
  if (Hp == H && Wp == W && cg > 1) {  // no border: the transpose is the padded image
    transpose_bytes(hwc, cg, H * W, padded);
    return;
  }
  // Only the border needs the pad byte: the rows below overwrite the rest.
  if (Hp != H || Wp != W) {
    const size_t row = static_cast<size_t>(Wp * cg);
    std::memset(padded, pad, static_cast<size_t>(ph) * row);
    std::memset(padded + (ph + H) * Wp * cg, pad, static_cast<size_t>(Hp - ph - H) * row);
    for (int64_t y = 0; y < H; ++y) {
      uint8_t* r = padded + (y + ph) * Wp * cg;
      std::memset(r, pad, static_cast<size_t>(pw * cg));
      std::memset(r + (pw + W) * cg, pad, static_cast<size_t>((Wp - pw - W) * cg));
    }
  }
  if (cg > 1) {
    transpose_bytes(hwc, cg, H * W, hwc_scratch);
    hwc = hwc_scratch;
  }
  for (int64_t y = 0; y < H; ++y)
    std::memcpy(padded + ((y + ph) * Wp + pw) * cg, hwc + y * W * cg, static_cast<size_t>(W * cg));
}

// Rows [lo, hi) of the patches, taps in (i, j, c) order:
// patches[p][(i * kw + j) * cg + c] = padded[row(p, i)][col(p, j)][c]. At
// dilation 1 a window row is one copy of kw * cg bytes (192 for a 3x3
// window over 64 channels), instead of a copy per tap. RB > 0 fixes that
// row length at compile time (3: a 3-wide window over one channel), so the
// copy is a few moves rather than a call.
template <int RB>
void im2col_rows(const uint8_t* padded, int64_t Wp, int64_t cg, const Window2d& win, uint8_t* patches, int64_t lo,
                 int64_t hi) {
  const int64_t row_bytes = RB > 0 ? RB : win.kw * cg, K = win.kh * row_bytes;
  const int64_t kh = win.kh, ow = win.ow, sh = win.sh, sw = win.sw, dh = win.dh;
  int64_t oy = lo / ow, ox = lo % ow;  // stepped below: a division per pixel was a fifth of a small conv
  for (int64_t p = lo; p < hi; ++p, ox = ox + 1 == ow ? (++oy, 0) : ox + 1) {
    uint8_t* dst = patches + p * K;
    for (int64_t i = 0; i < kh; ++i, dst += row_bytes) {
      const uint8_t* src = padded + ((oy * sh + i * dh) * Wp + ox * sw) * cg;
      if (RB > 0 || win.dw == 1) {
        std::memcpy(dst, src, static_cast<size_t>(row_bytes));
      } else {
        for (int64_t j = 0; j < win.kw; ++j) std::memcpy(dst + j * cg, src + j * win.dw * cg, static_cast<size_t>(cg));
      }
    }
  }
}

void im2col(const uint8_t* x, int64_t H, int64_t W, int64_t c0, int64_t cg, const Window2d& win, uint8_t pad,
            uint8_t* padded, uint8_t* hwc_scratch, uint8_t* patches) {
  const int64_t Hp = win.ph + H + win.pad_bottom(H), Wp = win.pw + W + win.pad_right(W);
  pad_pixels(x, H, W, c0, cg, Hp, Wp, win.ph, win.pw, pad, padded, hwc_scratch);
  const int64_t P = win.oh * win.ow, K = cg * win.kh * win.kw;
  parallel_for(P, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, K)),
               [&](int64_t lo, int64_t hi) {
                 if (win.dw == 1 && win.kw * cg == 3) im2col_rows<3>(padded, Wp, cg, win, patches, lo, hi);
                 else im2col_rows<0>(padded, Wp, cg, win, patches, lo, hi);
               });
}

// ----- depthwise: one input channel per group ---------------------------------------
// MobileNet's 3x3 convs have groups == C: through im2col each group would be a GEMM of
// K = kh * kw and one column, dominated by packing and driver calls. Here each output
// channel's plane is summed directly: the input plane, minus zx, padded with zeros (the
// code zx is real 0), times each tap's (w - zw), added to int32 sums along an output row.
// The sum is the exact int32 acc of docs/numerics.md in another order, then the GEMM's
// epilogue, operation for operation.

struct DepthwiseEpilogue {
  float zy, lo, hi;  // requantization zero point and clamp bounds (unused for float outputs)
};

// One output row: acc (+ bias, two's complement as the GEMM adds it) -> out codes or floats.
template <class Q>
inline void depthwise_store(const int32_t* acc, int64_t n, uint32_t bias, float scale, const DepthwiseEpilogue& e,
                            Q* out) {
  for (int64_t x = 0; x < n; ++x) {
    const int32_t a = static_cast<int32_t>(static_cast<uint32_t>(acc[x]) + bias);
    if constexpr (std::is_same_v<Q, float>) {
      out[x] = static_cast<float>(a) * scale;
    } else {
      float v = std::nearbyint(static_cast<float>(a) * scale) + e.zy;
      v = v < e.lo ? e.lo : v;
      v = v > e.hi ? e.hi : v;
      out[x] = static_cast<Q>(static_cast<int32_t>(v));
    }
  }
}

// A whole plane's sums -> outputs, in a clone of its own (the epilogue's roundps needs
// SSE4.1, which the baseline build lacks).
template <class Q>
LUCID_DEPTHWISE_CLONES void depthwise_store_plane(const int32_t* acc, int64_t n, uint32_t bias, float scale,
                                                  const DepthwiseEpilogue& e, Q* out) {
  depthwise_store(acc, n, bias, scale, e, out);
}

// One input plane minus zx, as int32, into the interior of `plane` (Hp x Wp; the
// border holds zeros, written once when the buffer was made).
template <bool SIGNED>
LUCID_DEPTHWISE_CLONES void fill_plane(const uint8_t* __restrict src, int32_t zx, int64_t H, int64_t W, int64_t Wp,
                                       int64_t ph, int64_t pw, int32_t* __restrict plane) {
  for (int64_t y = 0; y < H; ++y) {
    const uint8_t* __restrict s = src + y * W;
    int32_t* __restrict d = plane + (y + ph) * Wp + pw;
    for (int64_t x = 0; x < W; ++x)
      d[x] = (SIGNED ? int32_t{static_cast<int8_t>(s[x])} : int32_t{s[x]}) - zx;
  }
}

// The padded plane's even and odd columns (each Wp / 2 + 1 wide), for stride 2.
LUCID_DEPTHWISE_CLONES void split_columns(const int32_t* __restrict plane, int64_t Hp, int64_t Wp,
                                          int32_t* __restrict even, int32_t* __restrict odd) {
  const int64_t half = Wp / 2 + 1, n_odd = Wp / 2;
  for (int64_t r = 0; r < Hp; ++r) {
    const int32_t* __restrict s = plane + r * Wp;
    int32_t* __restrict e = even + r * half;
    int32_t* __restrict o = odd + r * half;
    for (int64_t c = 0; c < n_odd; ++c) e[c] = s[2 * c];
    for (int64_t c = 0; c < n_odd; ++c) o[c] = s[2 * c + 1];
    if (Wp % 2) e[n_odd] = s[Wp - 1];
  }
}

// The 3x3 windows of stride 1 or 2 (dilation 1), MobileNet's: each output's nine terms
// summed in a register (no acc round trip per tap), rows read contiguously; for stride
// 2 the caller has split the padded rows into their even and odd columns (`even`,
// `odd`, split_columns), so tap j reads column x + j / 2 of one of them.
template <int SW>
LUCID_DEPTHWISE_CLONES void depthwise_rows_3x3(const int32_t* __restrict plane, int64_t Wp, int64_t oh,
                                               int64_t ow, const int32_t* __restrict taps,
                                               int32_t* __restrict even, int32_t* __restrict odd,
                                               int32_t* __restrict acc_rows) {
  const int64_t half = Wp / 2 + 1;
  const int32_t t0 = taps[0], t1 = taps[1], t2 = taps[2], t3 = taps[3], t4 = taps[4], t5 = taps[5], t6 = taps[6],
                t7 = taps[7], t8 = taps[8];
  for (int64_t oy = 0; oy < oh; ++oy) {
    int32_t* __restrict acc = acc_rows + oy * ow;
    if constexpr (SW == 1) {
      const int32_t* __restrict r0 = plane + oy * Wp;
      const int32_t* __restrict r1 = r0 + Wp;
      const int32_t* __restrict r2 = r1 + Wp;
      for (int64_t x = 0; x < ow; ++x)
        acc[x] = t0 * r0[x] + t1 * r0[x + 1] + t2 * r0[x + 2] + t3 * r1[x] + t4 * r1[x + 1] + t5 * r1[x + 2] +
                 t6 * r2[x] + t7 * r2[x + 1] + t8 * r2[x + 2];
    } else {
      const int64_t r = oy * 2;
      const int32_t* __restrict e0 = even + r * half;
      const int32_t* __restrict o0 = odd + r * half;
      const int32_t* __restrict e1 = e0 + half;
      const int32_t* __restrict o1 = o0 + half;
      const int32_t* __restrict e2 = e1 + half;
      const int32_t* __restrict o2 = o1 + half;
      for (int64_t x = 0; x < ow; ++x)  // columns 2x, 2x + 1, 2x + 2
        acc[x] = t0 * e0[x] + t1 * o0[x] + t2 * e0[x + 1] + t3 * e1[x] + t4 * o1[x] + t5 * e1[x + 1] +
                 t6 * e2[x] + t7 * o2[x] + t8 * e2[x + 1];
    }
  }
}

// Output channel o of one image: `plane` is its input channel minus zx, Hp x Wp with the
// zero padding; `acc` holds ow int32 sums.
template <class Q>
LUCID_DEPTHWISE_CLONES void depthwise_plane(const int32_t* plane, int64_t Wp, const int32_t* taps,
                                            const Window2d& win, uint32_t bias, float scale,
                                            const DepthwiseEpilogue& e, int32_t* acc, Q* out) {
  const int64_t ow = win.ow, sw = win.sw;
  for (int64_t oy = 0; oy < win.oh; ++oy) {
    for (int64_t x = 0; x < ow; ++x) acc[x] = 0;
    for (int64_t i = 0; i < win.kh; ++i) {
      const int32_t* row = plane + (oy * win.sh + i * win.dh) * Wp;
      for (int64_t j = 0; j < win.kw; ++j) {
        const int32_t t = taps[i * win.kw + j];
        const int32_t* src = row + j * win.dw;
        if (sw == 1) {
          for (int64_t x = 0; x < ow; ++x) acc[x] += t * src[x];
        } else {
          for (int64_t x = 0; x < ow; ++x) acc[x] += t * src[x * sw];
        }
      }
    }
    depthwise_store(acc, ow, bias, scale, e, out + oy * ow);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// The 3x3 windows again, for symmetric weights (zw = 0, so every tap w fits int8)
// on CPUs with AVX-512 VNNI and VBMI: one vpermb lays out, for 16 outputs, the
// quads (x[c], x[c + 1], x[c + 2], x[c + 3]) of one input row (c = s * output
// column), and one vpdpbusd adds their products with the row's taps
// (w0, w1, w2, 0). The codes are uint8 (int8 codes flipped, zx with them), the
// border holds zx, and the zero point comes out of the sum exactly:
//   sum_t (x_t - zx) * w_t = sum_t x_t * w_t - zx * sum_t w_t   (int32).
// `plane` is Hp rows of Wp codes, with 64 readable bytes past its end.
//
// The epilogue runs on the sums in registers, the operations of depthwise_store
// 16 lanes at a time (the wrapping bias add in the starting sum, then
// kernels::store_requant16).
template <int S, class Q>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))) void depthwise_3x3_vnni(
    const uint8_t* plane, int64_t Wp, int64_t oh, int64_t ow, const int8_t* w9, int32_t zx, uint32_t bias,
    float scale, const DepthwiseEpilogue& e, Q* out_plane) {
  uint32_t quad[3];
  int32_t wsum = 0;
  for (int i = 0; i < 3; ++i) {
    quad[i] = static_cast<uint8_t>(w9[3 * i]) | uint32_t{static_cast<uint8_t>(w9[3 * i + 1])} << 8 |
              uint32_t{static_cast<uint8_t>(w9[3 * i + 2])} << 16;
    wsum += int32_t{w9[3 * i]} + w9[3 * i + 1] + w9[3 * i + 2];
  }
  const __m512i w0 = _mm512_set1_epi32(static_cast<int32_t>(quad[0])), w1 = _mm512_set1_epi32(static_cast<int32_t>(quad[1])),
                w2 = _mm512_set1_epi32(static_cast<int32_t>(quad[2]));
  alignas(64) uint8_t idx_bytes[64];
  for (int l = 0; l < 16; ++l)
    for (int b = 0; b < 4; ++b) idx_bytes[4 * l + b] = static_cast<uint8_t>(S * l + b);
  const __m512i idx = _mm512_load_si512(idx_bytes);
  // The sum starts at bias - zx * sum(w): the zero point's part and the wrapping bias add
  // in one integer (two's complement addition is associative).
  const __m512i base = _mm512_set1_epi32(static_cast<int32_t>(bias - static_cast<uint32_t>(zx * wsum)));
  const __m512 sc = _mm512_set1_ps(scale), zy = _mm512_set1_ps(e.zy), lo = _mm512_set1_ps(e.lo),
               hi = _mm512_set1_ps(e.hi);
  for (int64_t oy = 0; oy < oh; ++oy) {
    const uint8_t* r0 = plane + oy * S * Wp;
    const uint8_t* r1 = r0 + Wp;
    const uint8_t* r2 = r1 + Wp;
    Q* out = out_plane + oy * ow;
    for (int64_t x = 0; x < ow; x += 16) {
      const __mmask16 m = ow - x >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (ow - x)) - 1u);
      __m512i a = _mm512_dpbusd_epi32(base, _mm512_permutexvar_epi8(idx, _mm512_loadu_si512(r0 + x * S)), w0);
      a = _mm512_dpbusd_epi32(a, _mm512_permutexvar_epi8(idx, _mm512_loadu_si512(r1 + x * S)), w1);
      a = _mm512_dpbusd_epi32(a, _mm512_permutexvar_epi8(idx, _mm512_loadu_si512(r2 + x * S)), w2);
      kernels::store_requant16(a, sc, zy, lo, hi, m, out + x);
    }
  }
}

bool depthwise_vnni_available() {
  static const bool ok = kernels::cpu_has_avx512vnni() && __builtin_cpu_supports("avx512vbmi");
  return ok;
}
#endif

template <class Q>
void qconv2d_depthwise(const uint8_t* xb, bool x_signed, int32_t zx, const Tensor& w, const int32_t* zw,
                       const int32_t* bias, const float* scale, const DepthwiseEpilogue& e, const Window2d& win,
                       int64_t N, int64_t C, int64_t H, int64_t W, int64_t O, Q* ob) {
  const int64_t og = O / C, taps = win.kh * win.kw, P = win.oh * win.ow;
  const int64_t Hp = win.ph + H + win.pad_bottom(H), Wp = win.pw + W + win.pad_right(W);
  // (w - zw) per output channel and tap: |w - zw| <= 255, and K = taps obeys the op's limit
  std::vector<int32_t> wt(static_cast<size_t>(O * taps));
  const int8_t* wb = w.data<int8_t>();
  for (int64_t o = 0; o < O; ++o)
    for (int64_t t = 0; t < taps; ++t) wt[o * taps + t] = int32_t{wb[o * taps + t]} - zw[o];
  // A task is one (image, input channel): its plane is padded once for its og outputs.
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, P * taps * og));
  const bool k3 = win.kh == 3 && win.kw == 3 && win.dh == 1 && win.dw == 1 && win.sh == win.sw &&
                  (win.sw == 1 || win.sw == 2);
#if defined(__x86_64__) && defined(__GNUC__)
  bool symmetric = true;
  for (int64_t o = 0; o < O; ++o) symmetric &= zw[o] == 0;
  if (k3 && symmetric && depthwise_vnni_available()) {
    const uint8_t flip = x_signed ? 0x80 : 0;
    const int32_t zxu = x_signed ? zx + 128 : zx;
    parallel_for(N * C, grain, [&](int64_t lo, int64_t hi) {
      // Padded uint8 plane: the border is zx's code, written once; 64 bytes of slack
      // for the last row's vector loads.
      std::vector<uint8_t> plane(static_cast<size_t>(Hp * Wp + 64), static_cast<uint8_t>(zxu));
      for (int64_t task = lo; task < hi; ++task) {
        const int64_t n = task / C, c = task % C;
        const uint8_t* src = xb + (n * C + c) * H * W;
        for (int64_t y = 0; y < H; ++y) {
          uint8_t* d = plane.data() + (y + win.ph) * Wp + win.pw;
          if (flip) for (int64_t x = 0; x < W; ++x) d[x] = static_cast<uint8_t>(src[y * W + x] ^ flip);
          else std::memcpy(d, src + y * W, static_cast<size_t>(W));
        }
        for (int64_t k = 0; k < og; ++k) {
          const int64_t o = c * og + k;
          const uint32_t bo = bias ? static_cast<uint32_t>(bias[o]) : 0u;
          Q* dst = ob + (n * O + o) * P;
          if (win.sw == 1) depthwise_3x3_vnni<1>(plane.data(), Wp, win.oh, win.ow, wb + o * taps, zxu, bo, scale[o], e, dst);
          else depthwise_3x3_vnni<2>(plane.data(), Wp, win.oh, win.ow, wb + o * taps, zxu, bo, scale[o], e, dst);
        }
      }
    });
    return;
  }
#endif
  parallel_for(N * C, grain, [&](int64_t lo, int64_t hi) {
    std::vector<int32_t> plane(static_cast<size_t>(Hp * Wp), 0), acc(static_cast<size_t>(k3 ? P : win.ow));
    std::vector<int32_t> even, odd;
    if (k3 && win.sw == 2) {
      even.assign(static_cast<size_t>(Hp * (Wp / 2 + 1)), 0);
      odd.assign(even.size(), 0);
    }
    for (int64_t task = lo; task < hi; ++task) {
      const int64_t n = task / C, c = task % C;
      const uint8_t* src = xb + (n * C + c) * H * W;
      if (x_signed) fill_plane<true>(src, zx, H, W, Wp, win.ph, win.pw, plane.data());
      else fill_plane<false>(src, zx, H, W, Wp, win.ph, win.pw, plane.data());
      if (k3 && win.sw == 2) split_columns(plane.data(), Hp, Wp, even.data(), odd.data());
      for (int64_t k = 0; k < og; ++k) {
        const int64_t o = c * og + k;
        const uint32_t bo = bias ? static_cast<uint32_t>(bias[o]) : 0u;
        if (k3) {
          if (win.sw == 1) depthwise_rows_3x3<1>(plane.data(), Wp, win.oh, win.ow, wt.data() + o * taps, nullptr,
                                                 nullptr, acc.data());
          else depthwise_rows_3x3<2>(plane.data(), Wp, win.oh, win.ow, wt.data() + o * taps, even.data(), odd.data(),
                                     acc.data());
          depthwise_store_plane(acc.data(), P, bo, scale[o], e, ob + (n * O + o) * P);
        } else {
          depthwise_plane(plane.data(), Wp, wt.data() + o * taps, win, bo, scale[o], e, acc.data(),
                          ob + (n * O + o) * P);
        }
      }
    }
  });
}

// The weights in the patches' tap order, (o, i, j, c) (the int32 sums do not depend
// on the order of their terms), packed for `kern`, one panel set per group.
// `cp` >= cg is the channel stride of a tap (the padded pixels' channel count);
// channels past cg get weight 0.
std::vector<kernels::QPackedWeights> pack_groups(const kernels::QGemmKernel& kern, const Tensor& w, int64_t groups,
                                                 int64_t cp) {
  const int64_t O = w.size(0), cg = w.size(1), taps = w.size(2) * w.size(3), K = cp * taps, og = O / groups;
  std::vector<int8_t> w_hwc(static_cast<size_t>(O * K), 0);
  const int8_t* wb = w.data<int8_t>();
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t t = 0; t < taps; ++t) w_hwc[o * K + t * cp + c] = wb[(o * cg + c) * taps + t];
  std::vector<kernels::QPackedWeights> packed;
  for (int64_t g = 0; g < groups; ++g)
    packed.push_back(kernels::qgemm_pack_weights(kern, w_hwc.data() + g * og * K, og, K, K));
  return packed;
}

}  // namespace

// Packed panels of one frozen conv weight, one set per (kernel layout, groups, channel
// stride) used so far.
struct QConvWeightCache {
  struct Entry {
    const kernels::QGemmKernel* kernel;
    int64_t groups, cp;
    std::vector<kernels::QPackedWeights> packed;
  };
  std::mutex mutex;
  std::vector<std::shared_ptr<const Entry>> entries;

  std::shared_ptr<const Entry> get(const kernels::QGemmKernel& kern, const Tensor& w, int64_t groups, int64_t cp) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& e : entries)
      if (e->kernel == &kern && e->groups == groups && e->cp == cp) return e;
    entries.push_back(std::make_shared<const Entry>(Entry{&kern, groups, cp, pack_groups(kern, w, groups, cp)}));
    return entries.back();
  }
};

namespace {

// A calling thread's buffers for the indirect path, kept between calls: a fresh
// vector per call zero-filled megabytes, and large fresh allocations come from
// mmap and fault in every page again. Grown, never shrunk; not shared between
// threads (the pool's workers only read and write what the caller hands them,
// and t_hwc, which each worker keeps for itself).
struct Scratch {
  std::unique_ptr<uint8_t[]> data;
  size_t size = 0;
  uint8_t* get(size_t n) {
    if (n > size) {
      data.reset(new uint8_t[n]);
      size = n;
    }
    return data.get();
  }
};
thread_local Scratch t_padded, t_product, t_hwc;

}  // namespace

std::shared_ptr<QConvWeightCache> make_qconv_weight_cache() { return std::make_shared<QConvWeightCache>(); }

void qconv2d(const Tensor& x, int32_t zx, const Tensor& w, const int32_t* zw, const int32_t* bias,
             const float* scale, int32_t zy, QBounds b, const Window2d& win, int64_t groups, const Tensor& out,
             QConvWeightCache* cache) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), O = w.size(0);
  const int64_t cg = C / groups, og = O / groups, K = cg * win.kh * win.kw, P = win.oh * win.ow;
  const size_t osize = itemsize(out.dtype());
  if (cg == 1 && groups > 1 && N * O * P > 0) {
    const DepthwiseEpilogue e{static_cast<float>(zy), b.lo, b.hi};
    const uint8_t* xb = static_cast<const uint8_t*>(x.raw_data());
    const bool xs = x.dtype() == DType::Int8;
    switch (out.dtype()) {
      case DType::Float32:
        qconv2d_depthwise(xb, xs, zx, w, zw, bias, scale, e, win, N, C, H, W, O, static_cast<float*>(out.raw_data()));
        return;
      case DType::Int8:
        qconv2d_depthwise(xb, xs, zx, w, zw, bias, scale, e, win, N, C, H, W, O, static_cast<int8_t*>(out.raw_data()));
        return;
      case DType::UInt8:
        qconv2d_depthwise(xb, xs, zx, w, zw, bias, scale, e, win, N, C, H, W, O, static_cast<uint8_t*>(out.raw_data()));
        return;
      case DType::Int32:
        qconv2d_depthwise(xb, xs, zx, w, zw, bias, scale, e, win, N, C, H, W, O, static_cast<int32_t*>(out.raw_data()));
        return;
      default: throw TypeError("internal: qconv2d output storage");
    }
  }
  kernels::QGemmParams p;
  p.x_signed = x.dtype() == DType::Int8;
  p.m = P, p.ldx = K, p.zx = zx;
  p.zy = static_cast<float>(zy), p.lo = b.lo, p.hi = b.hi;
  p.ldo = og;
  switch (out.dtype()) {
    case DType::Float32: p.out_kind = kernels::QOut::Float; break;
    case DType::Int8: p.out_kind = kernels::QOut::Int8; break;
    case DType::UInt8: p.out_kind = kernels::QOut::UInt8; break;
    case DType::Int32: p.out_kind = kernels::QOut::Requant32; break;
    default: throw TypeError("internal: qconv2d output storage");
  }
  // The patches hold x's codes and, where the window leaves the image, zx.
  const uint8_t zx_byte = static_cast<uint8_t>(zx);
  // Several images share one GEMM (m = images * P): a tiny feature map alone would
  // leave the GEMM driver's per-call cost dominant. The chunk keeps the patches
  // near 1 MiB. Integer sums and the per-element epilogue do not depend on m.
  const int64_t chunk = std::max<int64_t>(1, std::min<int64_t>(N, (int64_t{1} << 20) / std::max<int64_t>(1, P * K)));
  const bool a7 = kernels::qgemm_a7_matters(chunk * P) &&
                  kernels::activations_below_128(x.raw_data(), p.x_signed, x.numel()) &&
                  (win.ph == 0 && win.pw == 0 ? true : kernels::activations_below_128(&zx_byte, p.x_signed, 1));
  const kernels::QGemmKernel& kern = kernels::qgemm_select(chunk * P, a7);
  // Kernels with an indirect form read the windows in place from a padded
  // pixels-by-channels copy of the images (no im2col); the others (AMX) gather
  // them from it into a panel per row tile (qigemm). Output pixel (oy, ox)
  // reads kh window rows of kw * cp adjacent bytes, cp the pixels' channel
  // stride. That is C, or, when kw * C bytes are not whole groups of the
  // kernel's kr (an RGB stem) and the weights are symmetric, C rounded up to a
  // multiple of kr: the extra channels meet zero weights, and with zw = 0 the
  // product needs no code sums that they could disturb.
  bool indirect = false;
  int64_t cp = cg;
  if (groups == 1 && win.dw == 1 && kernels::qigemm_supports(kern)) {
    bool symmetric = true;
    for (int64_t o = 0; o < O; ++o) symmetric &= zw[o] == 0;
    const int64_t kr = kern.kr;
    if ((win.kw * C) % kr == 0) indirect = true;
    else if (symmetric) indirect = true, cp = (C + kr - 1) / kr * kr;
  }
  // The packed panels: from the frozen weight's cache, or packed for this call.
  std::shared_ptr<const QConvWeightCache::Entry> cached;
  std::vector<kernels::QPackedWeights> fresh;
  if (cache) cached = cache->get(kern, w, groups, cp);
  else fresh = pack_groups(kern, w, groups, cp);
  const std::vector<kernels::QPackedWeights>& packed = cache ? cached->packed : fresh;
  // A 1x1 window of stride 1 without padding (MobileNet's and ResNet-50's pointwise convs)
  // reads each pixel once: its patch row is the pixel's channels.
  const bool pointwise = win.kh == 1 && win.kw == 1 && win.sh == 1 && win.sw == 1 && win.ph == 0 && win.pw == 0 &&
                         win.pad_bottom(H) == 0 && win.pad_right(W) == 0;
  // The indirect product: int8 codes are stored with the sign bit flipped (the
  // kernels take uint8), and the zero point moves with them, as the GEMM
  // driver does for its panels.
  const int64_t Hp = win.ph + H + win.pad_bottom(H), Wp = win.pw + W + win.pad_right(W);
  if (indirect) {
    kernels::QIGemmGeometry g;
    g.image_stride = Hp * Wp * cp, g.P = P, g.ow = win.ow, g.row_step = win.sh * Wp * cp, g.col_step = win.sw * cp;
    g.nseg = win.kh, g.seglen = win.kw * cp, g.seg_stride = win.dh * Wp * cp;
    if (!kernels::qigemm_fits(packed[0], g)) throw ValueError("internal: qconv2d window rows do not fit the kernel");
    {
      // Byte codes go from the epilogue straight into the NCHW output; wider
      // outputs pass through a (pixels, channels) buffer and a reorder.
      const bool direct = p.out_kind == kernels::QOut::UInt8 || p.out_kind == kernels::QOut::Int8;
      const int64_t per_image = g.image_stride + (direct ? 0 : P * O * static_cast<int64_t>(osize));
      const int64_t ichunk = std::max<int64_t>(1, std::min<int64_t>(N, (int64_t{2} << 20) / std::max<int64_t>(1, per_image)));
      uint8_t* padded_buf = t_padded.get(static_cast<size_t>(ichunk * g.image_stride));
      char* tmp_buf = direct ? nullptr : reinterpret_cast<char*>(t_product.get(static_cast<size_t>(ichunk * P * O) * osize));
      const uint8_t flip = p.x_signed ? 0x80 : 0, pad = static_cast<uint8_t>(static_cast<uint8_t>(zx) ^ flip);
      const uint8_t* xb = static_cast<const uint8_t*>(x.raw_data());
      char* ob = static_cast<char*>(out.raw_data());
      kernels::QGemmParams q = p;
      q.x_signed = false, q.zx = p.x_signed ? zx + 128 : zx, q.zw = zw, q.bias = bias, q.scale = scale, q.ldo = O;
      for (int64_t n0 = 0; n0 < N; n0 += ichunk) {
        const int64_t nb = std::min(ichunk, N - n0);
        parallel_for(nb, 1, [&](int64_t lo, int64_t hi) {
          // This pool thread's reused transpose buffer (pad_pixels writes all
          // it reads), not an allocation and memset of C * H * W bytes per call.
          uint8_t* hwc = t_hwc.get(static_cast<size_t>(C > 1 && cp == C ? C * H * W : 0));
          for (int64_t i = lo; i < hi; ++i) {
            uint8_t* dst = padded_buf + i * g.image_stride;
            const uint8_t* img = xb + (n0 + i) * C * H * W;
            if (cp == C) {
              pad_pixels(img, H, W, 0, C, Hp, Wp, win.ph, win.pw, pad, dst, hwc);
            } else {  // a few channels: byte by byte into cp-byte pixels; the rest keep the pad byte
              std::memset(dst, pad, static_cast<size_t>(g.image_stride));
              for (int64_t c = 0; c < C; ++c)
                for (int64_t y = 0; y < H; ++y) {
                  const uint8_t* src = img + (c * H + y) * W;
                  uint8_t* d = dst + ((y + win.ph) * Wp + win.pw) * cp + c;
                  for (int64_t xx = 0; xx < W; ++xx) d[xx * cp] = src[xx];
                }
            }
            if (flip)  // the border already holds the flipped zero point
              for (int64_t y = 0; y < H; ++y) {
                uint8_t* row = dst + ((y + win.ph) * Wp + win.pw) * cp;
                for (int64_t b = 0; b < W * cp; ++b) row[b] ^= flip;
              }
          }
        });
        g.base = padded_buf;
        q.m = nb * P, q.out = tmp_buf;
        if (direct) {
          g.nchw = reinterpret_cast<uint8_t*>(ob) + n0 * O * P, g.nchw_image_stride = O * P;
          kernels::qigemm(packed[0], g, q);
          continue;
        }
        kernels::qigemm(packed[0], g, q);
        // (P, O) -> out[n0 + i] as (O, P), in blocks of 64 pixels over the pool
        const int64_t blocks = (P + 63) / 64;
        parallel_for(nb * blocks, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, 64 * O)), [&](int64_t lo, int64_t hi) {
          for (int64_t t = lo; t < hi; ++t) {
            const int64_t i = t / blocks, r0 = t % blocks * 64, rn = std::min<int64_t>(64, P - r0);
            char* dst = ob + ((n0 + i) * O * P + r0) * osize;
            const char* src = tmp_buf + (i * P + r0) * O * osize;
            if (osize == 1) {
              transpose_block(reinterpret_cast<const uint8_t*>(src), rn, O, O, reinterpret_cast<uint8_t*>(dst), P);
            } else {
              for (int64_t o = 0; o < O; ++o)
                for (int64_t r = 0; r < rn; ++r)
                  std::memcpy(dst + (o * P + r) * osize, src + (r * O + o) * osize, osize);
            }
          }
        });
      }
      return;
    }
  }
  std::vector<uint8_t> patches(static_cast<size_t>(chunk * P * K));
  std::vector<uint8_t> padded(static_cast<size_t>(cg * (win.ph + H + win.pad_bottom(H)) * (win.pw + W + win.pad_right(W))));
  std::vector<uint8_t> hwc_scratch(static_cast<size_t>(cg > 1 ? cg * H * W : 0));
  std::vector<char> tmp(static_cast<size_t>(chunk * P * og) * osize);
  // The padding byte: the zero point's code (its two's complement byte for int8).
  const uint8_t pad = static_cast<uint8_t>(zx);
  const uint8_t* xb = static_cast<const uint8_t*>(x.raw_data());
  char* ob = static_cast<char*>(out.raw_data());
  for (int64_t n0 = 0; n0 < N; n0 += chunk) {
    const int64_t nb = std::min(chunk, N - n0);
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* img = xb + (n0 + i) * C * H * W;
        if (pointwise) {  // the patches are the pixels, channels innermost: one transpose
          transpose_bytes(img + g * cg * H * W, cg, H * W, patches.data() + i * P * K);
        } else {
          im2col(img, H, W, g * cg, cg, win, pad, padded.data(), hwc_scratch.data(), patches.data() + i * P * K);
        }
      }
      p.m = nb * P;
      p.x = patches.data();
      p.zw = zw + g * og;
      p.bias = bias ? bias + g * og : nullptr;
      p.scale = scale + g * og;
      p.out = tmp.data();
      kernels::qgemm(packed[g], p);
      // (nb * P, og) -> out[n0 + i, g * og + o, :]
      for (int64_t i = 0; i < nb; ++i) {
        char* dst = ob + (((n0 + i) * O + g * og) * P) * osize;
        const char* src = tmp.data() + i * P * og * osize;
        if (osize == 1) {
          transpose_bytes(reinterpret_cast<const uint8_t*>(src), P, og, reinterpret_cast<uint8_t*>(dst));
        } else {
          for (int64_t o = 0; o < og; ++o)
            for (int64_t q = 0; q < P; ++q)
              std::memcpy(dst + (o * P + q) * osize, src + (q * og + o) * osize, osize);
        }
      }
    }
  }
}

}  // namespace lucid::cpu
