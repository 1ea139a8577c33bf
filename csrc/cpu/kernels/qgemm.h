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
// This layer depends on nothing but the standard library and lucid's thread
// pool, so the standalone test binary (LUCID_KERNEL_TESTS) links it alone.
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

struct QGemmKernel {
  const char* engine;   // engine family name: "reference", "avx2", "avx512vnni", ...
  const char* name;     // file stem, e.g. "qu8-qs8-gemm-6x16c2-avx2"
  int mr, nr, kr;       // register tile rows / columns; k values interleaved per column
  int kpad;             // K is zero-padded to a multiple of this in both panels
  bool a_int16;         // activation panel as int16 (else uint8)
  bool (*supported)();  // this CPU (and OS) can run it; checked at run time
  QGemmUKernel ukernel;
  // Weight panel layout: for column block b (nr columns, zero-padded past N),
  // k-group g (kr consecutive k), column j, lane r:
  //   data[((b * (kp / kr) + g) * nr + j) * kr + r] = w[b * nr + j][g * kr + r]
};

// Every kernel compiled into this build for this architecture, reference first.
const std::vector<const QGemmKernel*>& qgemm_kernels();

// Weights packed once for one kernel's layout, with the per-column sums the
// zero-point correction needs. Callers cache it (pack at convert / first use).
struct QPackedWeights {
  const QGemmKernel* kernel = nullptr;
  int64_t n = 0, k = 0, kp = 0;
  std::vector<int8_t> data;
  std::vector<int32_t> col_sum;  // sum_k w[n][k] of the raw int8 codes
};
// w: (n, k) int8 codes, row stride ldw.
QPackedWeights qgemm_pack_weights(const QGemmKernel& kernel, const int8_t* w, int64_t n, int64_t k, int64_t ldw);

// What the epilogue writes, per docs/numerics.md:
//   acc[m,n] = sum_k (x - zx)(w - zw[n]) + bias[n]   (int32, two's complement)
//   Int32:  out = acc
//   Float:  out = fl(float(acc) * scale[n])
//   Int8 / UInt8 / Requant32: out = clamp(fl(rint(fl(float(acc) * scale[n])) + zy), lo, hi)
enum class QOut { Int32, Float, Int8, UInt8, Requant32 };

struct QGemmParams {
  const void* x = nullptr;  // (m, k) activation codes, row stride ldx
  bool x_signed = false;    // int8 (qint8) activations, else uint8 (quint8)
  int64_t m = 0, ldx = 0;
  int32_t zx = 0;
  const int32_t* zw = nullptr;    // n weight zero points
  const int32_t* bias = nullptr;  // n int32 biases (bias_q), or null
  QOut out_kind = QOut::Int32;
  const float* scale = nullptr;   // n: sxw (Float) or the multipliers M (requantizing kinds)
  float zy = 0, lo = 0, hi = 0;   // requantization zero point and float clamp bounds
  void* out = nullptr;            // (m, n) row stride ldo
  int64_t ldo = 0;
};

// Runs the product and fused epilogue with w's kernel, threaded over M and N
// tiles on lucid's pool.
void qgemm(const QPackedWeights& w, const QGemmParams& p);

// ---- engine selection (lucid.backends.quantized.engine) -------------------
// Names this build knows on this architecture, and those the host can run
// ("auto" and "reference" always among them).
std::vector<std::string> qgemm_engine_names();
std::vector<std::string> qgemm_available_engines();
// Throws ValueError naming the valid choices for an unknown or unsupported name.
void set_qgemm_engine(const std::string& name);
std::string qgemm_engine();
// The kernel the current engine uses for a product with m rows.
const QGemmKernel& qgemm_select(int64_t m);

// ---- the kernels (declared here so the registry and tests can name them) --
extern const QGemmKernel qgemm_2x4c1_scalar;
#if defined(__x86_64__)
extern const QGemmKernel qgemm_5x16c2_avx2;
extern const QGemmKernel qgemm_6x16c4_avxvnni;
extern const QGemmKernel qgemm_8x16c4_avx512vnni;
extern const QGemmKernel qgemm_16x16c4_amx;
#endif

// CPU feature probes (CPUID + XCR0; AMX also asks Linux for tile state).
bool cpu_has_avx2();
bool cpu_has_avxvnni();
bool cpu_has_avx512vnni();
bool cpu_has_amx_int8();

}  // namespace lucid::kernels
