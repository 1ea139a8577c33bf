// Pointer-level kernels of the float grids (FP8 / FP4 encode and decode) and
// the block formats (MX / NVFP4 and the group-wise affine format in MLX's
// layout): one table of function pointers per ISA, chosen once at run time
// from CPUID, with the scalar table (core/minifloat.h's functions, element by
// element) always present. Every vector kernel returns exactly what the
// scalar table returns, bit for bit, for every input (tests/kernels checks
// every tail length and every special value, and all 2^32 float32 patterns
// for the FP8 encoders). No threads, no Tensor: the callers
// (cpu/quantize_float.cpp, cpu/group_quant.cpp) split the work over the pool.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/minifloat.h"

namespace lucid::cpu::fgrid {

// What an encode does with a NaN input: the code it gives (`nan_code`,
// without the sign) and whether the input's sign is kept. The float grids:
// the format's NaN (FP4: its max_code) with the sign; MLX's to_fp8 (the MX
// elements and scales): 0x7E with the sign; the MX FP4 elements: 0x7 unsigned.
struct Encoding {
  minifloat::Format f;
  bool saturate;
  uint32_t nan_code;
  bool nan_keeps_sign;
};
inline Encoding grid_encoding(const minifloat::Format& f, bool saturate) {
  return {f, saturate, f.nan_code ? f.nan_code : f.max_code, true};
}

// q[i] = encode(bits(fl(x[i] / s) + 0.0)), s = s[0], or s[i] with per_elem.
using encode_fn = void (*)(size_t n, const float* x, uint8_t* q, const float* s, bool per_elem,
                           const Encoding& e);
// y[i] = fl(decode(q[i]) * s), s = s[0], or s[i] with per_elem. `stream`:
// non-temporal stores of y (worth it when y is evicted before anyone reads it).
using decode_fn = void (*)(size_t n, const uint8_t* q, float* y, const float* s, bool per_elem,
                           const minifloat::Format& f, bool stream);
// fake_quantize onto a float grid: t = fl(x[i] / s), y[i] = fl(decode(encode(
// bits(t + 0.0))) * s), m[i] = (|t| <= the largest finite value) (0 for NaN).
using fake_fn = void (*)(size_t n, const float* x, float* y, uint8_t* m, const float* s, bool per_elem,
                         const Encoding& e);
// MX / NVFP4: `rows` rows of K floats (K a multiple of 32) -> words (K * bits
// / 32 per row, MLX's layout) and scale codes (K / group per row).
using block_quantize_fn = void (*)(const float* w, int64_t rows, int64_t K, minifloat::BlockMode mode,
                                   uint32_t* words, uint8_t* scales);
using block_dequantize_fn = void (*)(const uint32_t* words, const uint8_t* scales, int64_t rows, int64_t K,
                                     minifloat::BlockMode mode, float* w, bool stream);
// Affine groups (MLX layout, docs/numerics.md "group-wise affine"): `groups`
// consecutive groups of `group_size` floats -> group_size * bits / 32 words,
// one scale and one bias per group. Returns false when some element is not
// finite (NaN or +-inf; the format needs finite weights, the caller raises).
using affine_quantize_fn = bool (*)(const float* w, int64_t groups, int group_size, int bits, uint32_t* words,
                                    float* scales, float* biases);
// w = fl(fl(float(q) * scale) + bias), `groups` consecutive groups.
using affine_dequantize_fn = void (*)(const uint32_t* words, const float* scales, const float* biases,
                                      int64_t groups, int group_size, int bits, float* w, bool stream);

struct Kernels {
  const char* isa;
  encode_fn encode;
  decode_fn decode;
  fake_fn fake;
  block_quantize_fn block_quantize;
  block_dequantize_fn block_dequantize;
  affine_quantize_fn affine_quantize;
  affine_dequantize_fn affine_dequantize;
};

// The scalar table (every build), the AVX2 and AVX-512 (F + BW; its block
// kernels are the AVX2 ones) tables (x86-64 builds; nullptr elsewhere),
// whether or not this CPU can run them.
const Kernels& scalar();
const Kernels* avx2();
const Kernels* avx512();
// The fastest table this CPU supports (chosen once).
const Kernels& best();

// The AVX-512 table's NVFP4 element quotient (the reciprocal-and-residual form
// of fl(v[i] / d) its block_quantize uses) of n finite values by an E4M3 value
// d > 0, for lucid_kernel_tests to check against the true division. Needs an
// AVX-512 CPU; builds without the AVX-512 table throw std::logic_error.
void nv_quotient_avx512(size_t n, const float* v, float d, float* q);

// The scalar element operations the tables share (also what the tests use).
inline uint32_t encode_one(float t, const Encoding& e) {
  const uint32_t u = minifloat::bits_of(t);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (e.nan_keeps_sign ? (u >> 31) << e.f.sign_shift() : 0u) | e.nan_code;
  return minifloat::encode(u, e.f, e.saturate);
}

// The largest finite value of a format, as float32.
inline float max_finite(const minifloat::Format& f) { return minifloat::decode(f.max_code, f); }

}  // namespace lucid::cpu::fgrid
