// Scalar reference of the int4 GEMV with int8 activations (qd8-qb4w-gemv.h):
// the exact integer group dots weight by weight, then the float steps in the
// header's order, one output at a time. Every vector kernel must equal it.
#include "cpu/kernels/qd8-qb4w-gemv.h"
#include "cpu/kernels/qgemm.h"
#include "cpu/kernels/vquant-isa.h"

namespace lucid::kernels {

LUCID_SCALAR_ONLY void qd8_qb4w_gemv_scalar(LUCID_QD8_QB4W_GEMV_ARGS) {
  const size_t groups = K / G;
  for (size_t n = 0; n < rows; ++n) {
    const uint8_t* wn = w + n * (K / 2);
    float u = 0.0f;
    for (size_t g = 0; g < groups; ++g) {
      int32_t dot = 0;
      for (size_t k = g * G; k < (g + 1) * G; ++k) {
        uint8_t byte = static_cast<uint8_t>(wn[k / 2] ^ flip);
        int32_t nib = (k & 1) ? (byte >> 4) : (byte & 0x0f);
        size_t pos = k / 64 * 64 + 32 * (k & 1) + (k % 64) / 2;  // the layout of qd8_qb4w_prepare_x
        dot += static_cast<int32_t>(xp[pos]) * nib;
      }
      const int32_t z = zq ? zq[n * groups + g] : 8;
      const int32_t a = dot - z * sx[g];
      float t = static_cast<float>(a) * s[n * groups + g];
      u = u + t;
    }
    float r = u * sa;
    y[n] = bias ? r + bias[n] : r;
  }
}

qd8_qb4w_gemv_fn qd8_qb4w_gemv_best(const char** isa) {
  static const char* name = "scalar";
  static const qd8_qb4w_gemv_fn best = [] {
#if defined(__x86_64__) || defined(_M_X64)
    if (isa_supported("avx2")) return name = "avx2", &qd8_qb4w_gemv_avx2;
#endif
#if defined(__aarch64__)
    if (cpu_has_neon_dot()) return name = "neondot", &qd8_qb4w_gemv_neondot;
#endif
    return &qd8_qb4w_gemv_scalar;
  }();
  if (isa) *isa = name;
  return best;
}

}  // namespace lucid::kernels
