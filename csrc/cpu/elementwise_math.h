// float32 exp, log and tanh written without branches, so that the elementwise
// loops over them vectorize (libm's expf/tanhf are scalar calls, ~10x slower
// than numpy's SIMD versions). Accuracy, checked over every 7th float32 bit
// pattern (exp) / every 1009th (tanh) against double-precision libm: exp and
// tanh within 1 ulp of the correctly rounded result, sigmoid within 2 ulp
// (normal range). Compiled with -ffp-contract=off, so results do not depend
// on FMA availability. Coefficients: the classic Cephes expf / tanhf
// polynomials (public-domain numbers).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace lucid::cpu::fast {

inline float exp_f32(float x) {
  // e^x = 2^n e^r with n = round(x / ln2), |r| <= ln2 / 2; ln2 is split into
  // C1 + C2 with C1 short enough that n * C1 is exact (Cody-Waite).
  // Clamp so n stays in int range (NaN -> 0; the result is fixed up below).
  // Plain compares, not fmin/fmax: those become library calls, not minps.
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  xc = xc != xc ? 0.0f : xc;
  // Round to nearest by adding and removing 1.5 * 2^23 (exact for |v| < 2^22;
  // std::floor would be a libm call that blocks vectorization).
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * (r * r) + r + 1.0f;
  // Scale by 2^n in two factors, each a normal float, so results that land
  // in the subnormal range still come out right.
  int32_t ni = static_cast<int32_t>(n);
  int32_t n1 = ni >> 1, n2 = ni - n1;
  y = (y * std::bit_cast<float>(static_cast<uint32_t>(n1 + 127) << 23)) *
      std::bit_cast<float>(static_cast<uint32_t>(n2 + 127) << 23);
  y = x > 88.72283935546875f ? std::numeric_limits<float>::infinity() : y;
  y = x < -103.97208404541015625f ? 0.0f : y;
  return x != x ? x : y;
}

inline float tanh_f32(float x) {
  float a = std::fabs(x);
  // |x| >= 0.625: 1 - 2 / (e^{2|x|} + 1), which saturates to exactly 1.
  float e = exp_f32(2.0f * (a < 20.0f ? a : 20.0f));
  float big = std::copysign(1.0f - 2.0f / (e + 1.0f), x);
  // |x| < 0.625: an odd polynomial, no cancellation near 0.
  float s = x * x;
  float p = -5.70498872745e-3f;
  p = p * s + 2.06390887954e-2f;
  p = p * s - 5.37397155531e-2f;
  p = p * s + 1.33314422036e-1f;
  p = p * s - 3.33332819422e-1f;
  float small = std::copysign(p * s * x + x, x);  // keeps tanh(-0) = -0
  float y = a < 0.625f ? small : big;
  return x != x ? x : y;
}

// log x = e ln2 + log1p(f) with x = 2^e (1 + f), sqrt(1/2) <= 1 + f < sqrt 2.
// Within 1 ulp over every 101st positive float32 (subnormals included).
inline float log_f32(float x) {
  // Subnormal inputs are scaled by 2^23 first so the exponent field is valid.
  bool tiny = x < 1.17549435e-38f;
  float xs = tiny ? x * 8388608.0f : x;
  uint32_t u = std::bit_cast<uint32_t>(xs);
  float e = static_cast<float>(static_cast<int32_t>((u >> 23) & 0xffu) - 126) - (tiny ? 23.0f : 0.0f);
  float m = std::bit_cast<float>((u & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
  bool low = m < 0.707106781186547524f;
  e = low ? e - 1.0f : e;
  float f = low ? (m + m) - 1.0f : m - 1.0f;
  float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  float y = p * f * z;
  y = y + e * -2.12194440e-4f;
  y = y - 0.5f * z;
  float r = f + y;
  r = r + e * 0.693359375f;
  r = x == std::numeric_limits<float>::infinity() ? x : r;
  r = x == 0.0f ? -std::numeric_limits<float>::infinity() : r;
  r = x < 0.0f ? std::numeric_limits<float>::quiet_NaN() : r;
  return x != x ? x : r;
}

inline float sigmoid_f32(float x) { return 1.0f / (1.0f + exp_f32(-x)); }

}  // namespace lucid::cpu::fast
