// Scalar reference of the int4 weight-only GEMV (qb4w-gemv.h): the vector
// kernels' 16-lane accumulation, written lane by lane.
#include <cmath>

#include "cpu/kernels/qb4w-gemv.h"
#include "cpu/kernels/vquant-isa.h"

namespace lucid::kernels {

LUCID_SCALAR_ONLY void f32_qb4w_gemv_scalar(LUCID_QB4W_GEMV_ARGS) {
  const size_t groups = K / G;
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * (K / 2);
    float row[16] = {}, corr = 0.0f;
    for (size_t g = 0; g < groups; ++g) {
      float a[16] = {}, c[16] = {};
      for (size_t b = g * G; b < (g + 1) * G; b += 32)
        for (int l = 0; l < 16; ++l) {
          const uint8_t byte = static_cast<uint8_t>(wn[b / 2 + l] ^ flip);
          a[l] = std::fma(xp[b + l], static_cast<float>(byte & 0x0f), a[l]);
          c[l] = std::fma(xp[b + 16 + l], static_cast<float>(byte >> 4), c[l]);
        }
      const float sg = s[n * groups + g];
      for (int l = 0; l < 16; ++l) row[l] = std::fma(a[l] + c[l], sg, row[l]);
      float zs = static_cast<float>(zq ? zq[n * groups + g] : 8) * sx[g];
      float term = zs * sg;
      corr = corr + term;
    }
    float h8[8], h4[4];
    for (int l = 0; l < 8; ++l) h8[l] = row[l] + row[l + 8];
    for (int l = 0; l < 4; ++l) h4[l] = h8[l] + h8[l + 4];
    float t = (h4[0] + h4[2]) + (h4[1] + h4[3]);
    t = t - corr;
    y[n] = bias ? t + bias[n] : t;
  }
}

qb4w_gemv_fn f32_qb4w_gemv_best(const char** isa) {
  static const char* name = "scalar";
  static const qb4w_gemv_fn best = [] {
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
    if (isa_supported("avx512")) return name = "avx512", &f32_qb4w_gemv_avx512;
    if (isa_supported("avx2") && __builtin_cpu_supports("fma")) return name = "avx2", &f32_qb4w_gemv_avx2;
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
