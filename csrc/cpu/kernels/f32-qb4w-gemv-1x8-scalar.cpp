// Scalar reference of the int4 weight-only GEMV (qb4w-gemv.h): the vector
// kernels' 4 x 8-lane accumulation, written lane by lane.
#include <initializer_list>

#include "cpu/kernels/qb4w-gemv.h"
#include "cpu/kernels/vquant-isa.h"

namespace lucid::kernels {

LUCID_SCALAR_ONLY void f32_qb4w_gemv_scalar(LUCID_QB4W_GEMV_ARGS) {
  const size_t groups = K / G;
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * (K / 2);
    float row[8] = {}, corr = 0.0f;
    for (size_t g = 0; g < groups; ++g) {
      float acc[4][8] = {};
      for (size_t b = g * G; b < (g + 1) * G; b += 32) {
        const uint8_t* wb = wn + b / 2;
        for (int p = 0; p < 4; ++p)
          for (int l = 0; l < 8; ++l) {
            uint8_t byte = static_cast<uint8_t>(wb[(p >> 1) * 8 + l] ^ flip);
            int32_t nib = (p & 1) ? (byte >> 4) : (byte & 0x0f);
            float prod = xp[b + 8 * (p >> 1) + 16 * (p & 1) + l] * static_cast<float>(nib);
            acc[p][l] = acc[p][l] + prod;
          }
      }
      const float sg = s[n * groups + g];
      for (int l = 0; l < 8; ++l) {
        float gsum = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l]);
        float scaled = gsum * sg;
        row[l] = row[l] + scaled;
      }
      float zs = static_cast<float>(zq[n * groups + g]) * sx[g];
      float term = zs * sg;
      corr = corr + term;
    }
    float t = ((row[0] + row[4]) + (row[2] + row[6])) + ((row[1] + row[5]) + (row[3] + row[7]));
    t = t - corr;
    y[n] = bias ? t + bias[n] : t;
  }
}

qb4w_gemv_fn f32_qb4w_gemv_best(const char** isa) {
  static const char* name = "scalar";
  static const qb4w_gemv_fn best = [] {
#if defined(__x86_64__) || defined(_M_X64)
    if (isa_supported("avx512")) return name = "avx512", &f32_qb4w_gemv_avx512;
    if (isa_supported("avx2")) return name = "avx2", &f32_qb4w_gemv_avx2;
#endif
#if defined(__aarch64__)
    return name = "neon", &f32_qb4w_gemv_neon;
#endif
    return &f32_qb4w_gemv_scalar;
  }();
  if (isa) *isa = name;
  return best;
}

}  // namespace lucid::kernels
