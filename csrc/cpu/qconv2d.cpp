// Quantized 2-D convolution on the CPU stream (docs/numerics.md, "Quantized
// convolution"): an integer im2col of the activation codes, padded with the
// activation zero point so padding contributes (zx - zx) * w = 0, then the
// int8 GEMM of cpu/kernels with its fused epilogue, then a transpose from
// (pixels, channels) to the NCHW output. The im2col goes through a
// channels-innermost copy of the input, so a patch is kh copies of kw * cg
// bytes; the weights are reordered to match.
#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/errors.h"
#include "core/thread_pool.h"
#include "cpu/qgemm.h"
#include "cpu/qconv2d.h"

namespace lucid::cpu {

namespace {

// dst (cols, rows) = src (rows, cols) transposed, for byte codes. 16 x 16 tiles
// go through SSE2 unpacks (four rounds of interleaving: bytes, pairs, quads,
// halves), ~1/8 of the instructions of a byte at a time; edges go byte by byte.
void transpose_bytes(const uint8_t* src, int64_t rows, int64_t cols, uint8_t* dst) {
  int64_t r_done = 0, c_done = 0;
#if defined(__SSE2__)
  r_done = rows / 16 * 16, c_done = cols / 16 * 16;
  for (int64_t r0 = 0; r0 < r_done; r0 += 16)
    for (int64_t c0 = 0; c0 < c_done; c0 += 16) {
      __m128i a[16], b[16];
      for (int i = 0; i < 16; ++i)
        a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (r0 + i) * cols + c0));
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
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (c0 + 2 * k) * rows + r0),
                         _mm_unpacklo_epi64(b[k], b[8 + k]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (c0 + 2 * k + 1) * rows + r0),
                         _mm_unpackhi_epi64(b[k], b[8 + k]));
      }
    }
#endif
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = c < c_done ? r_done : 0; r < rows; ++r) dst[c * rows + r] = src[r * cols + c];
}

// The channel group of one image as Hp x Wp pixels of cg bytes each (channels
// innermost), its pixels at (ph, pw), bordered by the pad byte, so that every
// window tap lands inside and a window row of kw pixels is kw * cg adjacent
// bytes. `hwc_scratch` holds H * W * cg bytes.
void pad_pixels(const uint8_t* x, int64_t H, int64_t W, int64_t c0, int64_t cg, int64_t Hp, int64_t Wp, int64_t ph,
                int64_t pw, uint8_t pad, uint8_t* padded, uint8_t* hwc_scratch) {
  if (Hp != H || Wp != W) std::memset(padded, pad, static_cast<size_t>(Hp * Wp * cg));
  const uint8_t* hwc = x + c0 * H * W;  // one channel: CHW is already HWC
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

}  // namespace

void qconv2d(const Tensor& x, int32_t zx, const Tensor& w, const int32_t* zw, const int32_t* bias,
             const float* scale, int32_t zy, QBounds b, const Window2d& win, int64_t groups, const Tensor& out) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), O = w.size(0);
  const int64_t cg = C / groups, og = O / groups, K = cg * win.kh * win.kw, P = win.oh * win.ow;
  const size_t osize = itemsize(out.dtype());
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
  bool a7 = kernels::activations_below_128(x.raw_data(), p.x_signed, x.numel()) &&
            (win.ph == 0 && win.pw == 0 ? true : kernels::activations_below_128(&zx_byte, p.x_signed, 1));
  // Several images share one GEMM (m = images * P): a tiny feature map alone would
  // leave the GEMM driver's per-call cost dominant. The chunk keeps the patches
  // near 1 MiB. Integer sums and the per-element epilogue do not depend on m.
  const int64_t chunk = std::max<int64_t>(1, std::min<int64_t>(N, (int64_t{1} << 20) / std::max<int64_t>(1, P * K)));
  const kernels::QGemmKernel& kern = kernels::qgemm_select(chunk * P, a7);
  // The weights in the patches' tap order, (o, i, j, c): the int32 sums do not
  // depend on the order of their terms.
  const int64_t taps = win.kh * win.kw;
  std::vector<int8_t> w_hwc(static_cast<size_t>(O * K));
  const int8_t* wb = w.data<int8_t>();
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t t = 0; t < taps; ++t) w_hwc[o * K + t * cg + c] = wb[(o * cg + c) * taps + t];
  std::vector<kernels::QPackedWeights> packed;  // once per call, per group
  for (int64_t g = 0; g < groups; ++g)
    packed.push_back(kernels::qgemm_pack_weights(kern, w_hwc.data() + g * og * K, og, K, K));
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
      for (int64_t i = 0; i < nb; ++i)
        im2col(xb + (n0 + i) * C * H * W, H, W, g * cg, cg, win, pad, padded.data(), hwc_scratch.data(),
               patches.data() + i * P * K);
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
