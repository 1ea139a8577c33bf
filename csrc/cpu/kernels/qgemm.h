// Integer GEMM microkernel layer: u8 activations x s8 weights -> exact int32
// (s8 activations enter as u8 with the sign bit flipped, so one kernel family
// serves both), with zero-point correction and the epilogue of
// docs/numerics.md ("Integer matrix product and requantization").
//
// File names follow XNNPACK: qu8-qs8-gemm-<MR>x<NR>c<KR>-<isa>.cpp says the
// datatypes, the op, the register tile and the instruction set. Every vector
// kernel has the scalar reference kernel beside it, and
// tests/kernels/qgemm.cpp holds each one against it bit for bit.
//
// This folder depends on nothing but the standard library (and the header-only
// core/errors.h), so it builds alone for tests and cross-compiled checks. The
// threaded driver (packing, blocking, epilogue) is cpu/qgemm.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lucid::kernels {

// A microkernel computes the raw product of one register tile:
//   c[i * nr + j] = sum_{k < kp} a[i][k] * w[k][j]      (exact int32)
// for i < mr (rows of the activation panel, `a_stride` elements apart) and
// every j < nr, where w is one packed column panel (see QGemmKernel). Rows
// i >= mr may be read (the panel is zero-padded to a multiple of MR) but are
// not stored.
using QGemmUKernel = void (*)(int mr, size_t kp, const void* a, size_t a_stride, const int8_t* w, int32_t* c);

// The indirect form (convolutions read their windows in place, no im2col): row
// i's kp = nseg * seglen values are nseg segments of seglen uint8 codes, segment
// s at rows[i] + s * seg_stride; seglen is a multiple of kr. Only rows[0..mr)
// are read.
using QIGemmUKernel = void (*)(int mr, size_t nseg, size_t seglen, size_t seg_stride, const uint8_t* const* rows,
                               const int8_t* w, int32_t* c);

struct QGemmKernel {
  const char* engine;   // engine family name: "reference", "avx2", "avx512vnni", ...
  const char* name;     // file stem, e.g. "qu8-qs8-gemm-6x16c2-avx2"
  int mr, nr, kr;       // register tile rows / columns; k values interleaved per column
  int kpad;             // K is zero-padded to a multiple of this in both panels
  bool a_int16;         // activation panel as int16 (else 8-bit)
  bool a_minus128;      // 8-bit panel holds xu - 128 as int8 (for s8 x s8 dot products); the
                        // driver adds 128 * column sum back
  bool (*supported)();  // this CPU (and OS) can run it; checked at run time
  QGemmUKernel ukernel;
  // Only valid when every activation (as uint8, after the sign flip of int8
  // codes) is below 128; the driver checks before choosing such a kernel.
  bool needs_a7 = false;
  // The indirect form of the same product, when the kernel has one (8-bit
  // panels without the -128 shift only).
  QIGemmUKernel iukernel = nullptr;
  // Weight panel layout: for column block b (nr columns, zero-padded past N),
  // k-group g (kr consecutive k), column j, lane r:
  //   data[((b * (kp / kr) + g) * nr + j) * kr + r] = w[b * nr + j][g * kr + r]
};

// Every kernel compiled into this build for this architecture, reference first.
const std::vector<const QGemmKernel*>& qgemm_kernels();

// ---- self-check ------------------------------------------------------------
// Once per process (at the first engine query or selection, thread-safe),
// every kernel of every family this CPU supports runs a few tiles (rows 1 and
// MR, K tails, random and extreme codes) against the plain int64 sum. A family
// is `verified` when all its kernels pass; a supported family that fails is
// never chosen by "auto", is left out of qgemm_available_engines(), and
// setting it raises. Takes well under a millisecond. The environment variable
// LUCID_QGEMM_SELFCHECK_FAIL=<family>[,<family>...] makes the named families
// fail (a test hook for that path).
struct QGemmFamilyCheck {
  std::string family;
  bool supported;  // this CPU (and OS) can run every kernel of the family
  bool verified;   // supported, and every kernel passed
};
const std::vector<QGemmFamilyCheck>& qgemm_self_check();

// ---- engine selection (lucid.backends.quantized.engine) -------------------
// Names this build knows on this architecture, and those the host can run
// ("auto" and "reference" always among them).
std::vector<std::string> qgemm_engine_names();
std::vector<std::string> qgemm_available_engines();
// Throws ValueError naming the valid choices for an unknown or unsupported name.
void set_qgemm_engine(const std::string& name);
std::string qgemm_engine();
// The kernel the current engine uses for a product with m rows; `a7`: every
// activation is below 128 (then a needs_a7 kernel of the family may be used).
const QGemmKernel& qgemm_select(int64_t m, bool a7 = false);
// Whether the answer to activations_below_128 would change the kernel chosen
// for m rows (families without a 7-bit variant need no scan of the codes).
bool qgemm_a7_matters(int64_t m);

// ---- the kernels (declared here so the registry and tests can name them) --
extern const QGemmKernel qgemm_2x4c1_scalar;
#if defined(__aarch64__)
extern const QGemmKernel qgemm_4x16c4_neondot;
extern const QGemmKernel qgemm_4x16c8_neoni8mm;
#endif
#if defined(__x86_64__)
extern const QGemmKernel qgemm_5x16c2_avx2;
extern const QGemmKernel qgemm_5x16c4_avx2_u7;
extern const QGemmKernel qgemm_6x16c4_avxvnni;
extern const QGemmKernel qgemm_8x32c4_avx512vnni;
extern const QGemmKernel qgemm_32x32c4_amx;
#endif

// CPU feature probes (CPUID + XCR0; AMX also asks Linux for tile state).
bool cpu_has_avx2();
bool cpu_has_avxvnni();
bool cpu_has_avx512vnni();
bool cpu_has_amx_int8();
bool cpu_has_neon_dot();   // arm64 SDOT / UDOT (FEAT_DotProd)
bool cpu_has_neon_i8mm();  // arm64 USMMLA (FEAT_I8MM)

}  // namespace lucid::kernels
