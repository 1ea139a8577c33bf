// float16 / bfloat16 storage types for the CPU stream. Arithmetic widens to
// float32 (exact) and narrows with round-to-nearest-even, which is what
// NUMERICS.md and MLX both do.
#pragma once
#include <cstdint>
#include <cstring>

namespace lucid {

inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

struct bfloat16 {
  uint16_t bits;
  bfloat16() = default;
  explicit bfloat16(float f) {
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) { bits = static_cast<uint16_t>((u >> 16) | 0x40); return; }  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    bits = static_cast<uint16_t>(u >> 16);
  }
  operator float() const { return bits_f32(static_cast<uint32_t>(bits) << 16); }
};

struct float16 {
  uint16_t bits;
  float16() = default;
  explicit float16(float f) {
    uint32_t u = f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) {  // inf or NaN
      bits = static_cast<uint16_t>(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
    } else if (a >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
      bits = static_cast<uint16_t>(sign | 0x7c00u);
    } else if (a < 0x38800000u) {  // result is subnormal (or zero) in half
      // Scale into the subnormal grid with an exact float add trick: adding
      // 0.5 (2^-1) aligns the mantissa so hardware rounding is nearest-even.
      float mag = bits_f32(a) + 0.5f;
      bits = static_cast<uint16_t>(sign | (f32_bits(mag) - 0x3f000000u));
    } else {
      uint32_t mant_odd = (a >> 13) & 1u;
      a += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round
      bits = static_cast<uint16_t>(sign | (a >> 13));
    }
  }
  operator float() const {
    uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    uint32_t exp = (bits >> 10) & 0x1fu, mant = bits & 0x3ffu;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
      float m = static_cast<float>(mant) * 5.9604644775390625e-08f;
      return sign ? -m : m;
    }
    return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
  }
};

}  // namespace lucid
