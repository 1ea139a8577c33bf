// One-element formulas of the quantization family (docs/numerics.md): the
// scalar reference kernels are loops over these, and the vector kernels use
// them for their last few elements, so a tail cannot drift from the body.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace lucid::kernels::scalar {

inline uint32_t bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
constexpr uint32_t kCanonicalNaN = 0x7fc00000u;

// Clamped pre-cast value: c = clamp(fl(rint(fl(x / s)) + float(z)), lo, hi).
// `v` is the pre-clamp value (for the STE mask). NaN passes through both
// comparisons unchanged; callers select on x != x.
inline float clamp_code(float x, float s, int32_t z, float lo, float hi, float& v) {
  float t = x / s;
  float r = std::nearbyint(t);
  v = r + static_cast<float>(z);
  float c = v < lo ? lo : v;
  return c > hi ? hi : c;
}

// quantize: the code as int32 (callers narrow; it is within the grid).
// NaN -> z exactly, in the integer domain (float(z) may round above 2^24).
inline int32_t quantize_one(float x, float s, int32_t z, float lo, float hi) {
  float v;
  float c = clamp_code(x, s, z, lo, hi, v);
  return x != x ? z : static_cast<int32_t>(c);
}

// dequantize of a code narrower than 32 bits: d = q - z exact in int32.
inline float dequantize_one(int32_t q, float s, int32_t z) { return static_cast<float>(q - z) * s; }

// fake_quantize for grids with qmax - qmin < 2^31; writes the STE mask bit.
inline float fake_quantize_one(float x, float s, int32_t z, float lo, float hi, uint8_t& pass) {
  float v;
  float c = clamp_code(x, s, z, lo, hi, v);
  pass = static_cast<uint8_t>((v >= lo) & (v <= hi));
  if (x != x) return from_bits(kCanonicalNaN);
  return static_cast<float>(static_cast<int32_t>(c) - z) * s;
}

inline uint8_t unpack_nibble(unsigned n, bool is_signed) {
  return is_signed ? static_cast<uint8_t>(static_cast<int>(n ^ 8u) - 8) : static_cast<uint8_t>(n);
}

}  // namespace lucid::kernels::scalar
