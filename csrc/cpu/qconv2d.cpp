// Quantized 2-D convolution on the CPU stream (docs/numerics.md, "Quantized
// convolution"): an integer im2col of the activation codes, padded with the
// activation zero point so padding contributes (zx - zx) * w = 0, then the
// int8 GEMM of cpu/kernels with its fused epilogue, then a transpose from
// (pixels, channels) to the NCHW output.
#include <cstring>
#include <vector>

#include "core/errors.h"
#include "core/thread_pool.h"
#include "cpu/qgemm.h"
#include "cpu/quantization.h"

namespace lucid::cpu {

namespace {

// patches[p][(c * kh + i) * kw + j] = x[c0 + c][row(p, i)][col(p, j)], or pad.
void im2col(const uint8_t* x, int64_t H, int64_t W, int64_t c0, int64_t cg, const Window2d& win, uint8_t pad,
            uint8_t* patches) {
  const int64_t K = cg * win.kh * win.kw;
  parallel_for(win.oh, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, win.ow * K)), [&](int64_t lo, int64_t hi) {
    for (int64_t oy = lo; oy < hi; ++oy)
      for (int64_t ox = 0; ox < win.ow; ++ox) {
        uint8_t* dst = patches + (oy * win.ow + ox) * K;
        for (int64_t c = 0; c < cg; ++c) {
          const uint8_t* plane = x + (c0 + c) * H * W;
          for (int64_t i = 0; i < win.kh; ++i) {
            int64_t y = win.in_row(oy, i);
            for (int64_t j = 0; j < win.kw; ++j) {
              int64_t xx = win.in_col(ox, j);
              *dst++ = (y >= 0 && y < H && xx >= 0 && xx < W) ? plane[y * W + xx] : pad;
            }
          }
        }
      }
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
  const kernels::QGemmKernel& kern = kernels::qgemm_select(P, a7);
  std::vector<kernels::QPackedWeights> packed;  // once per call, per group
  for (int64_t g = 0; g < groups; ++g)
    packed.push_back(kernels::qgemm_pack_weights(kern, w.data<int8_t>() + g * og * K, og, K, K));
  std::vector<uint8_t> patches(static_cast<size_t>(P * K));
  std::vector<char> tmp(static_cast<size_t>(P * og) * osize);
  // The padding byte: the zero point's code (its two's complement byte for int8).
  const uint8_t pad = static_cast<uint8_t>(zx);
  const uint8_t* xb = static_cast<const uint8_t*>(x.raw_data());
  char* ob = static_cast<char*>(out.raw_data());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      im2col(xb + n * C * H * W, H, W, g * cg, cg, win, pad, patches.data());
      p.x = patches.data();
      p.zw = zw + g * og;
      p.bias = bias ? bias + g * og : nullptr;
      p.scale = scale + g * og;
      p.out = tmp.data();
      kernels::qgemm(packed[g], p);
      // (P, og) -> out[n, g * og + o, :]
      char* dst = ob + ((n * O + g * og) * P) * osize;
      for (int64_t o = 0; o < og; ++o)
        for (int64_t q = 0; q < P; ++q)
          std::memcpy(dst + (o * P + q) * osize, tmp.data() + (q * og + o) * osize, osize);
    }
}

}  // namespace lucid::cpu
