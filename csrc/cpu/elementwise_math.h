// float32 exp, log, tanh, sin and cos written without branches, so that the
// elementwise loops over them vectorize (libm's expf/tanhf/sinf are scalar
// calls, ~5-10x slower than numpy's SIMD versions). Accuracy against
// double-precision libm, checked over every 7th float32 bit pattern (exp),
// every 101st/1009th (log/tanh) and every float32 with |x| <= 1e6 (sin, cos): exp, log,
// tanh, sin and cos within 1 ulp of the correctly rounded result, sigmoid
// within 2 ulp (normal range). Compiled with -ffp-contract=off, so results do
// not depend on FMA availability. Coefficients: the classic Cephes expf /
// tanhf polynomials (public-domain numbers); sin/cos fits are lucid's own.
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
  // |x| >= 0.625: 1 - 2 / (e^{2|x|} + 1). Past |x| = 9.1 the exact tanh rounds
  // to 1 (1 - tanh < 2^-25), so clamping there saturates exactly and keeps
  // e^{2|x|} <= e^18.2: a normal float made with one 2^n scale and none of
  // exp_f32's overflow/underflow/NaN fix-ups (NaN is handled at the end).
  float t = 2.0f * (a < 9.1f ? a : 9.1f);
  float n = (t * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(t / ln2)
  float r = t - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float q = 1.9875691500e-4f;  // e^r as in exp_f32
  q = q * r + 1.3981999507e-3f;
  q = q * r + 8.3334519073e-3f;
  q = q * r + 4.1665795894e-2f;
  q = q * r + 1.6666665459e-1f;
  q = q * r + 5.0000001201e-1f;
  float e = (q * (r * r) + r + 1.0f) *
            std::bit_cast<float>(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
  float big = 1.0f - 2.0f / (e + 1.0f);
  // |x| < 0.625: an odd polynomial, no cancellation near 0.
  float s = x * x;
  float p = -5.70498872745e-3f;
  p = p * s + 2.06390887954e-2f;
  p = p * s - 5.37397155531e-2f;
  p = p * s + 1.33314422036e-1f;
  p = p * s - 3.33332819422e-1f;
  float small = p * s * a + a;
  float y = std::copysign(a < 0.625f ? small : big, x);  // odd; tanh(-0) = -0
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

// sin and cos of a float32 for |x| <= kTrigFastBound, computed in double so the
// result is within 1 ulp without float-level error analysis: the double work
// is still a handful of SIMD ops (libm's sinf is a scalar call, ~8x slower).
// Larger |x|, inf and NaN go to trig_exact_f32; callers pick per lane with
// trig_in_fast_range (see map1_with_fallback in elementwise_loops.h).
//
// Range reduction (Cody-Waite): x = n pi/2 + r, |r| <= pi/4, pi/2 split into
// three 33-bit-or-less parts P1 + P2 + P3. For |n| < 2^20, n * P1 and n * P2
// are exact doubles and x - n * P1 is exact (both are multiples of 2^-32 and
// the difference is below 1), so r keeps ~50 correct bits even when x sits
// next to a multiple of pi/2.
inline constexpr float kTrigFastBound = 1.0e6f;  // 2/pi * 1e6 < 2^20

inline bool trig_in_fast_range(float x) { return std::fabs(x) <= kTrigFastBound; }  // false for NaN

// sin(x + quadrant * pi/2): quadrant 0 gives sin, 1 gives cos. Lanes outside
// the fast range (NaN, inf, huge) compute garbage here without undefined
// behaviour (no float->int conversion) and are replaced by the caller.
inline float sin_quadrant_f32(float x, uint64_t quadrant) {
  double xd = static_cast<double>(x);
  // n = round(x * 2/pi) by adding and removing 1.5 * 2^52: the sum's low
  // mantissa bits are then n mod 2^51, which gives the quadrant without a
  // conversion to int (std::nearbyint and int casts would not vectorize well).
  double shifted = xd * 0.63661977236758138 + 6755399441055744.0;
  double n = shifted - 6755399441055744.0;
  uint64_t q = std::bit_cast<uint64_t>(shifted) + quadrant;
  double r = xd - n * 1.5707963267341256;   // P1 = 0x1.921fb544p+0, exact product
  r = r - n * 6.077100506303966e-11;         // P2 = 0x1.0b4611a6p-34, exact product
  r = r - n * 2.0222662487959506e-21;        // P3, the rest of pi/2
  double z = r * r;
  // Least-squares fits on Chebyshev nodes over |r| <= 1.001 pi/4 (derived for
  // lucid): relative error 2^-27.9 (sin) and 2^-32.9 (cos) before the final
  // rounding to float, so the float result is within 1 ulp.
  double s = -1.9513278499327285e-4;
  s = s * z + 8.3321434974702249e-3;
  s = s * z - 1.666665426477352e-1;
  s = r * (1.0 + z * s);  // a product, so sin(-0) = -0
  double c = 2.4429825339683359e-5;
  c = c * z - 1.3887283580529611e-3;
  c = c * z + 4.1666644906582215e-2;
  c = (1.0 - 0.5 * z) + z * z * c;
  double y = (q & 1) ? c : s;
  // Quadrants 2 and 3 negate: flip the sign bit.
  return static_cast<float>(std::bit_cast<double>(std::bit_cast<uint64_t>(y) ^ ((q & 2) << 62)));
}

inline float sin_fast_f32(float x) { return sin_quadrant_f32(x, 0); }
inline float cos_fast_f32(float x) { return sin_quadrant_f32(x, 1); }

}  // namespace lucid::cpu::fast
