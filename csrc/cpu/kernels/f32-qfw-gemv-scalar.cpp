// Scalar reference of the float-coded and affine weight GEMV (qfw-gemv.h):
// the vector kernels' 16-lane, 4-accumulator arithmetic written lane by lane
// with table decoding, and the run-time choice of kernel.
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "core/minifloat.h"
#include "cpu/kernels/qfw-gemv.h"
#include "cpu/kernels/vquant-isa.h"

namespace lucid::kernels {

namespace {

// E4M3 code c as the vector kernels shift it into half precision: the sign
// to bit 15, the 7 magnitude bits to bits 13..7 (value decode(c) * 2^-8).
float e4m3_shifted(uint32_t c) {
  float16 h;
  h.bits = static_cast<uint16_t>(((c & 0x80u) << 8) | ((c & 0x7fu) << 7));
  return static_cast<float>(h);
}

QfwTables make_tables() {
  QfwTables t;
  for (uint32_t c = 0; c < 256; ++c) {
    t.e4m3[c] = e4m3_shifted(c);
    t.e5m2[c] = minifloat::decode(c, minifloat::kE5M2);
    t.e8m0[c] = minifloat::e8m0_value(c);
    t.e4m3_scale[c] = minifloat::decode(c, minifloat::kE4M3FN);
  }
  for (uint32_t c = 0; c < 16; ++c) t.e2m1[c] = minifloat::decode(c, minifloat::kE2M1FN);
  return t;
}

}  // namespace

const QfwTables& qfw_tables() {
  static const QfwTables t = make_tables();
  return t;
}

namespace {

// The tree of qfw-gemv.h over 16 lanes.
LUCID_SCALAR_ONLY float tree(float r[16]) {
  for (int l = 0; l < 8; ++l) r[l] = r[l] + r[l + 8];
  for (int l = 0; l < 4; ++l) r[l] = r[l] + r[l + 4];
  for (int l = 0; l < 2; ++l) r[l] = r[l] + r[l + 2];
  return r[0] + r[1];
}

LUCID_SCALAR_ONLY void one_row(QfwFormat f, size_t K, size_t rows, const float* xp, const uint8_t* w, const float* s,
                               size_t s_stride, const uint8_t* sc, size_t Gaff, const float* gb, const float* bias,
                               float* y) {
  const QfwTables& T = qfw_tables();
  const bool nib = qfw_nibbles(f), affine = qfw_affine(f), row_scale = qfw_row_scale(f), e4m3 = qfw_e4m3_elements(f);
  const float* ev8 = f == QfwFormat::E5M2Row ? T.e5m2 : T.e4m3;
  const float* dv = f == QfwFormat::Nvfp4 ? T.e4m3_scale : T.e8m0;
  const size_t rb = qfw_row_bytes(f, K), Kp = qfw_padded(K), blocks = Kp / 32, G = qfw_group(f, Gaff);
  const size_t groups = row_scale ? 0 : K / G;
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * rb;
    float acc[4][16] = {};
    bool nan = false;
    for (size_t i = 0; i < blocks; ++i) {
      uint8_t buf[32] = {};
      const uint8_t* wb;
      if (nib) wb = wn + 16 * i;
      else if (32 * i + 32 <= K) wb = wn + 32 * i;
      else {  // the last, partial block of an fp8 row: zero codes past K
        std::memcpy(buf, wn + 32 * i, K - 32 * i);
        wb = buf;
      }
      const float* xb = xp + 32 * i;
      for (int l = 0; l < 16; ++l) {
        float a, c;
        if (affine && nib) {
          a = static_cast<float>(wb[l] & 15u);
          c = static_cast<float>(wb[l] >> 4);
        } else if (affine) {
          a = static_cast<float>(wb[l]);
          c = static_cast<float>(wb[16 + l]);
        } else if (nib) {
          a = T.e2m1[wb[l] & 15u];
          c = T.e2m1[wb[l] >> 4];
        } else {
          a = ev8[wb[l]];
          c = ev8[wb[16 + l]];
          if (e4m3) nan = nan || (wb[l] & 0x7fu) == 0x7fu || (wb[16 + l] & 0x7fu) == 0x7fu;
        }
        const float p = a * xb[l];
        const float t = std::fma(c, xb[16 + l], p);
        float& ac = acc[i % 4][l];
        if (row_scale) ac = ac + t;
        else if (affine) ac = std::fma(t, s[n * s_stride + 32 * i / G], ac);
        else {
          const size_t g = G == 32 ? i : 2 * i + (l >= 8);
          ac = std::fma(t, dv[sc[n * groups + g]], ac);
        }
      }
    }
    float r[16];
    for (int l = 0; l < 16; ++l) r[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l]);
    float u = tree(r);
    if (e4m3) u = u * 256.0f;
    if (row_scale) u = u * s[n * s_stride];
    if (affine) {
      const float* X = xp + Kp;  // the group sums, zero past the last group
      float v[16] = {};
      for (size_t j = 0; 16 * j < groups; ++j)
        for (size_t l = 0; l < 16; ++l) {
          const size_t g = 16 * j + l;
          v[l] = std::fma(g < groups ? gb[n * s_stride + g] : 0.0f, X[g], v[l]);
        }
      u = u + tree(v);
    }
    if (nan) u = minifloat::float_of(0x7fc00000u);
    y[n] = bias ? (nan ? u : u + bias[n]) : u;
  }
}

}  // namespace

void f32_qfw_gemv_scalar(LUCID_QFW_GEMV_ARGS) {
  const size_t xl = qfw_xp_len(f, K, G);
  for (size_t m = 0; m < M; ++m) one_row(f, K, rows, xp + m * xl, w, s, s_stride, sc, G, gb, bias, y + m * ldy);
}

qfw_gemv_fn f32_qfw_gemv_best(const char** isa) {
  static const char* name = "scalar";
  static const qfw_gemv_fn best = [] {
#if defined(LUCID_QFW_X86) && defined(__GNUC__)
    if (isa_supported("avx512")) return name = "avx512", &f32_qfw_gemv_avx512;
    if (isa_supported("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
      return name = "avx2", &f32_qfw_gemv_avx2;
#endif
    return &f32_qfw_gemv_scalar;
  }();
  if (isa) *isa = name;
  return best;
}

}  // namespace lucid::kernels
