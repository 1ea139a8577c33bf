// The small floating-point formats of the float grids (FP8 E4M3FN and E5M2,
// FP4 E2M1FN, the E8M0 block scale of OCP MX) and the exact float32 <-> code
// conversions, written as integer operations on bit patterns so that every
// stream performs the same operations: the CPU stream calls these functions,
// the GPU stream composes the same shifts, masks and selects from MLX ops
// (gpu/quantize.cpp). docs/numerics.md, "Float grids", is the contract.
#pragma once
#include <cstdint>
#include <cstring>

namespace lucid::minifloat {

// A sign-magnitude format with `ebits` exponent bits, `mbits` mantissa bits
// and exponent bias `bias`. `max_code` is the magnitude code of the largest
// finite value; `inf_code` / `nan_code` the magnitude codes of infinity and
// the quiet NaN a conversion produces (0 when the format has none).
struct Format {
  int ebits, mbits, bias;
  uint32_t max_code, inf_code, nan_code;
  int sign_shift() const { return ebits + mbits; }
};

// 448 = 1.75 * 2^8; no infinity; NaN is S.1111.111.
inline constexpr Format kE4M3FN{4, 3, 7, 0x7e, 0, 0x7f};
// 57344 = 1.75 * 2^15; infinity S.11111.00; NaNs S.11111.{01,10,11}.
inline constexpr Format kE5M2{5, 2, 15, 0x7b, 0x7c, 0x7e};
// 6 = 1.5 * 2^2; neither infinity nor NaN.
inline constexpr Format kE2M1FN{2, 1, 1, 0x7, 0, 0};

inline uint32_t bits_of(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}
inline float float_of(uint32_t u) {
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

// v >> sh rounded to nearest, ties to even (1 <= sh <= 31).
inline uint32_t shift_round_even(uint32_t v, uint32_t sh) {
  uint32_t q = v >> sh, rem = v & ((1u << sh) - 1u), half = 1u << (sh - 1u);
  return q + static_cast<uint32_t>((rem > half) | ((rem == half) & (q & 1u)));
}

// The code of float32 bit pattern u, rounded to nearest even. Magnitudes
// whose rounded code exceeds max_code become max_code when `saturate`, else
// infinity, else NaN, else (FP4: no special values) max_code. NaN becomes the
// format's NaN (FP4: the code of +-0 with NaN's sign bit cleared is not a
// choice anyone makes; ONNX leaves it undefined and lucid gives max_code with
// the sign, as saturating every non-finite input). The sign is kept for zero.
inline uint32_t encode(uint32_t u, const Format& f, bool saturate) {
  const uint32_t sign = (u >> 31) << f.sign_shift();
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return f.nan_code ? (sign | f.nan_code) : (sign | f.max_code);
  // The float32 biased exponent of the format's smallest normal, 2^(1 - bias).
  const uint32_t e_norm = static_cast<uint32_t>(128 - f.bias);
  const uint32_t E = a >> 23;
  uint32_t code;
  if (E >= e_norm) {
    // Normal in the format: rebias the exponent in place and round the
    // mantissa away; a carry out of the mantissa moves into the exponent,
    // which is the next code up.
    code = shift_round_even(a - ((e_norm - 1u) << 23), static_cast<uint32_t>(23 - f.mbits));
  } else {
    // Subnormal in the format: the significand (implicit bit included; a
    // float32 subnormal has none and the exponent of E = 1) shifted right by
    // the extra distance below the smallest normal. Shifts past 31 leave
    // nothing that could round up (the significand is below 2^24).
    const uint32_t sig = (a & 0x7fffffu) | (E ? 0x800000u : 0u);
    const uint32_t Eeff = E ? E : 1u;
    uint32_t sh = static_cast<uint32_t>(23 - f.mbits) + (e_norm - Eeff);
    code = shift_round_even(sig, sh > 31u ? 31u : sh);
  }
  if (code > f.max_code) {
    if (saturate) code = f.max_code;
    else code = f.inf_code ? f.inf_code : (f.nan_code ? f.nan_code : f.max_code);
  }
  return sign | code;
}

// encode written as selects instead of branches: the same operations, in the
// order the GPU stream composes them from MLX ops, and a loop of it
// vectorizes (per-lane variable shifts). encode above is its scalar twin;
// the tests hold both against ml_dtypes.
inline uint32_t encode_select(uint32_t u, const Format& f, bool saturate) {
  const uint32_t sign = (u >> 31) << f.sign_shift();
  const uint32_t a = u & 0x7fffffffu;
  const uint32_t e_norm = static_cast<uint32_t>(128 - f.bias), shn = static_cast<uint32_t>(23 - f.mbits);
  const uint32_t E = a >> 23;
  const bool normal = E >= e_norm;
  const uint32_t vn = a - ((e_norm - 1u) << 23);
  const uint32_t sig = (a & 0x7fffffu) | (E > 0u ? 0x800000u : 0u);
  const uint32_t Eeff = E > 1u ? E : 1u;
  const uint32_t below = e_norm - (Eeff < e_norm ? Eeff : e_norm);
  const uint32_t shs0 = below + shn;
  const uint32_t shs = shs0 < 31u ? shs0 : 31u;
  const uint32_t v = normal ? vn : sig, sh = normal ? shn : shs;
  const uint32_t q = v >> sh, rem = v - (q << sh), half = 1u << (sh - 1u);
  uint32_t code = q + static_cast<uint32_t>((rem > half) | ((rem == half) & ((q & 1u) == 1u)));
  const uint32_t over = saturate ? f.max_code : (f.inf_code ? f.inf_code : (f.nan_code ? f.nan_code : f.max_code));
  code = code > f.max_code ? over : code;
  code = a > 0x7f800000u ? (f.nan_code ? f.nan_code : f.max_code) : code;
  return sign | code;
}

// The float32 value of a code (exact: every code is a float32).
inline float decode(uint32_t c, const Format& f) {
  const uint32_t sign = ((c >> f.sign_shift()) & 1u) << 31;
  const uint32_t e = (c >> f.mbits) & ((1u << f.ebits) - 1u), m = c & ((1u << f.mbits) - 1u);
  const uint32_t mag = c & ((1u << f.sign_shift()) - 1u);
  if (f.nan_code && mag >= (f.inf_code ? f.inf_code + 1u : f.nan_code)) return float_of(sign | 0x7fc00000u);
  if (f.inf_code && mag == f.inf_code) return float_of(sign | 0x7f800000u);
  if (e == 0) {
    // m * 2^(1 - bias - mbits): the product of two float32 values is exact.
    const uint32_t step = static_cast<uint32_t>(127 + 1 - f.bias - f.mbits) << 23;
    return float_of(sign | bits_of(static_cast<float>(m) * float_of(step)));
  }
  return float_of(sign | ((e + static_cast<uint32_t>(127 - f.bias)) << 23) | (m << (23 - f.mbits)));
}

// ---- OCP Microscaling (MX) and NVFP4 blocks, in MLX's layout -------------
// docs/numerics.md, "Block formats (MLX layout)". Where MLX's CPU and Metal
// results differ, these follow OCP MX v1.0 (and, for NVFP4, MLX's Metal
// kernel); every such case is listed there.

enum class BlockMode : int { Mxfp8 = 0, Mxfp4 = 1, Nvfp4 = 2 };
inline int block_group(BlockMode m) { return m == BlockMode::Nvfp4 ? 16 : 32; }
inline int block_bits(BlockMode m) { return m == BlockMode::Mxfp8 ? 8 : 4; }

// The E8M0 code of a group scale s = amax / max_element >= 0: the exponent of
// the smallest power of two >= s (ceil(log2(s)), decided exactly from the
// bits: the exponent, plus one unless the mantissa is zero), clamped to
// [-127, 127], so no element of the group exceeds the element format's
// largest value. 0xFF (NaN) for a non-finite s; 127 (2^0) for s = 0. These
// are mlx.core.quantize's scales on MLX's CPU device, except the clamp (MLX
// wraps exponents below -127 modulo 256) and the non-finite case (MLX gives
// 128): both follow OCP MX v1.0.
inline uint32_t e8m0_of_scale(float s) {
  if (!(s <= 3.40282347e38f)) return 0xffu;
  if (s == 0.0f) return 127u;
  uint32_t u = bits_of(s);
  int E;
  if (u < 0x00800000u) {  // subnormal: scaled by 2^64 exactly first
    u = bits_of(s * 18446744073709551616.0f);
    E = static_cast<int>(u >> 23) - 127 - 64;
  } else {
    E = static_cast<int>(u >> 23) - 127;
  }
  E += static_cast<int>((u & 0x7fffffu) != 0u);
  E = E < -127 ? -127 : (E > 127 ? 127 : E);
  return static_cast<uint32_t>(E + 127);
}

// 2^(b - 127) as float32 (b = 0: the subnormal 2^-127); NaN for 0xFF.
inline float e8m0_value(uint32_t b) {
  if (b == 0xffu) return float_of(0x7fc00000u);
  return b == 0 ? float_of(0x00400000u) : float_of(b << 23);
}

// An element or scale code as MLX's to_fp8 gives it: E4M3FN rounded to
// nearest even, saturating, NaN to +-448 (0x7E with NaN's sign).
inline uint32_t e4m3_saturating(float v) {
  uint32_t u = bits_of(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return ((u >> 31) << 7) | 0x7eu;
  return encode(u, kE4M3FN, true);
}

// An FP4 element: E2M1 rounded to nearest even with the sign kept (OCP MX;
// MLX's Metal kernel), NaN to 0x7.
inline uint32_t e2m1_element(float v) {
  uint32_t u = bits_of(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7u;
  return encode(u, kE2M1FN, true);
}

// One group of n = block_group(mode) floats: its scale code and its n codes.
inline void block_quantize_group(const float* g, BlockMode mode, uint8_t* codes, uint8_t& scale) {
  const int n = block_group(mode);
  bool nan = false;
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float a = g[i] < 0.0f ? -g[i] : g[i];
    if (a != a) nan = true;
    else amax = a > amax ? a : amax;
  }
  if (nan) amax = float_of(0x7fc00000u);
  if (mode == BlockMode::Nvfp4) {
    const uint32_t sc = e4m3_saturating(amax / 6.0f);
    scale = static_cast<uint8_t>(sc);
    const float d = decode(sc, kE4M3FN);
    for (int i = 0; i < n; ++i) codes[i] = static_cast<uint8_t>(e2m1_element(d == 0.0f ? g[i] * 0.0f : g[i] / d));
    return;
  }
  const bool fp8 = mode == BlockMode::Mxfp8;
  const uint32_t sb = e8m0_of_scale(amax / (fp8 ? 448.0f : 6.0f));
  scale = static_cast<uint8_t>(sb);
  if (sb == 0xffu) {
    for (int i = 0; i < n; ++i) codes[i] = fp8 ? 0x7eu : 0x7u;
    return;
  }
  const float d = e8m0_value(sb);
  for (int i = 0; i < n; ++i)
    codes[i] = static_cast<uint8_t>(fp8 ? e4m3_saturating(g[i] / d) : e2m1_element(g[i] / d));
}

// The value of code c of a group with scale code `scale`: decode(c) * scale.
inline float block_dequantize(uint32_t c, uint32_t scale, BlockMode mode) {
  if (mode == BlockMode::Nvfp4) return decode(c, kE2M1FN) * decode(scale, kE4M3FN);
  return decode(c, mode == BlockMode::Mxfp8 ? kE4M3FN : kE2M1FN) * e8m0_value(scale);
}

// rows x K floats (contiguous) -> words (rows x K * bits / 32, code k of a row
// at bit k * bits of its bit stream, 32 bits to a word) and scales (rows x K /
// group). K is a multiple of 32.
inline void block_quantize_rows(const float* w, int64_t rows, int64_t K, BlockMode mode, uint32_t* words,
                                uint8_t* scales) {
  const int G = block_group(mode), bits = block_bits(mode);
  const int64_t groups = K / G, wpr = K * bits / 32;
  uint8_t codes[32];
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t* out = words + r * wpr;
    for (int64_t j = 0; j < wpr; ++j) out[j] = 0;
    for (int64_t gi = 0; gi < groups; ++gi) {
      block_quantize_group(w + r * K + gi * G, mode, codes, scales[r * groups + gi]);
      for (int i = 0; i < G; ++i) {
        const int64_t bit = (gi * G + i) * bits;
        out[bit / 32] |= static_cast<uint32_t>(codes[i]) << (bit % 32);
      }
    }
  }
}

inline void block_dequantize_rows(const uint32_t* words, const uint8_t* scales, int64_t rows, int64_t K,
                                  BlockMode mode, float* out) {
  const int G = block_group(mode), bits = block_bits(mode);
  const int64_t groups = K / G, wpr = K * bits / 32;
  const uint32_t mask = (1u << bits) - 1u;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t bit = k * bits;
      const uint32_t c = (words[r * wpr + bit / 32] >> (bit % 32)) & mask;
      out[r * K + k] = block_dequantize(c, scales[r * groups + k / G], mode);
    }
}

}  // namespace lucid::minifloat
