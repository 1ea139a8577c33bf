// Memory-bound quantization microkernels (quantize, dequantize,
// fake_quantize forward / backward, int4 pack / unpack): one table of
// function pointers per ISA, chosen once at run time from CPUID.
//
// Every vector kernel computes exactly what its scalar reference
// (vquant-scalar.cpp) computes, bit for bit; the formulas are those of
// docs/numerics.md with its implementation notes: true division, rint ties to
// even, no FMA, clamp in float, NaN -> z (quantize, integer domain) or the
// canonical NaN 0x7fc00000 (fake_quantize).
//
// The kernels take plain pointers (no Tensor), so the standalone test driver
// (kernels/test/) builds them without the rest of lucid, also for aarch64.
//
// `flags` of every kernel that takes (s, z): kPerElem selects the parameter
// mode, kStream asks for non-temporal stores of the (large) output.
//   per_elem = false: `rows` runs of `len` elements; run r uses s[r], z[r]
//                     (per-tensor: rows = 1; per-group along the last axis:
//                     one run per group).
//   per_elem = true:  `rows` runs of `len` elements; element j of every run
//                     uses s[j], z[j] (per-channel along the last axis).
#pragma once
#include <cstddef>
#include <cstdint>

namespace lucid::kernels {

constexpr unsigned kPerElem = 1;  // element j of every run uses s[j], z[j]
// Write the float / 32-bit output with non-temporal stores (AVX2 tables;
// others ignore it): worth it when the output is evicted before anyone reads
// it, since it saves reading each output line before writing it.
constexpr unsigned kStream = 2;

// quantize: q = clamp(fl(rint(fl(x / s)) + float(z)), lo, hi); NaN x -> z.
// lo / hi are the float grid bounds (cpu::QBounds).
template <class Q>
using vquantize_fn = void (*)(size_t rows, size_t len, const float* x, Q* q, const float* s, const int32_t* z,
                              unsigned flags, float lo, float hi);
// dequantize: y = fl(float(q - z) * s), q - z exact in int32.
template <class Q>
using vdequantize_fn = void (*)(size_t rows, size_t len, const Q* q, float* y, const float* s, const int32_t* z,
                                unsigned flags);
// fake_quantize forward for grids with qmax - qmin < 2^31 (q - z in int32):
// y = dequantize(quantize(x)), m = (lo <= v <= hi) for the pre-clamp v,
// NaN x -> y = 0x7fc00000, m = 0.
using vfakequant_fn = void (*)(size_t rows, size_t len, const float* x, float* y, uint8_t* m, const float* s,
                               const int32_t* z, unsigned flags, float lo, float hi);
// fake_quantize backward on raw 32-bit floats: dx = (m & 1) ? dy : +0
// (flags: kStream only).
using vmaskgrad_fn = void (*)(size_t n, const uint32_t* dy, const uint8_t* m, uint32_t* dx, unsigned flags);
// int4 pack of `pairs` consecutive code pairs: out[i] = (c[2i] & 15) | (c[2i+1] & 15) << 4.
using vpack4_fn = void (*)(size_t pairs, const uint8_t* codes, uint8_t* out);
// int4 unpack: out[2i] = lo nibble, out[2i+1] = hi nibble, sign-extended
// ((n ^ 8) - 8) when is_signed.
using vunpack4_fn = void (*)(size_t pairs, const uint8_t* packed, uint8_t* out, bool is_signed);

struct VQuantKernels {
  const char* isa;
  vquantize_fn<int8_t> quantize_qs8;
  vquantize_fn<uint8_t> quantize_qu8;
  vquantize_fn<int32_t> quantize_qs32;
  vdequantize_fn<int8_t> dequantize_qs8;
  vdequantize_fn<uint8_t> dequantize_qu8;
  vfakequant_fn fake_quantize;
  vmaskgrad_fn mask_grad;
  vpack4_fn pack4;
  vunpack4_fn unpack4;
};

// The tables compiled into this build (scalar always; avx2 / avx512 on
// x86-64; neon on aarch64), whether or not this CPU can run them.
const VQuantKernels& vquant_scalar();
const VQuantKernels* vquant_avx2();
const VQuantKernels* vquant_avx512();
const VQuantKernels* vquant_neon();

// Whether this CPU (and OS) can run the named table ("scalar", "avx2",
// "avx512", "neon").
bool isa_supported(const char* isa);
// The fastest table this CPU supports (chosen once).
const VQuantKernels& vquant_best();

}  // namespace lucid::kernels
