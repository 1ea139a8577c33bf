// Run-time CPU feature probes for the kernel dispatcher. A kernel compiled
// for an instruction set is only ever called when CPUID reports it AND the OS
// saves the register state it needs (XCR0); AMX additionally needs Linux to
// grant tile data to this process (arch_prctl(ARCH_REQ_XCOMP_PERM)). On
// arm64, Linux reports features in the auxiliary vector, macOS in sysctl.
#include "cpu/kernels/qgemm.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#elif defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>
#endif
#if defined(__x86_64__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

namespace lucid::kernels {

#if defined(__x86_64__)
namespace {

struct X86Features {
  bool avx2 = false, avxvnni = false, avx512vnni = false, amx_int8 = false;
};

uint64_t read_xcr0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

bool request_amx_permission() {
#if defined(__linux__)
  constexpr long kArchGetXcompPerm = 0x1022, kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
  unsigned long bitmask = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &bitmask) != 0) return false;
  return (bitmask & (1ul << kXfeatureXtiledata)) != 0;
#else
  return false;  // no known way to enable tile state elsewhere
#endif
}

X86Features probe() {
  X86Features f;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  bool osxsave = (c >> 27) & 1;
  if (!osxsave) return f;
  uint64_t xcr0 = read_xcr0();
  bool ymm_state = (xcr0 & 0x6) == 0x6;                 // SSE + AVX state
  bool zmm_state = ymm_state && (xcr0 & 0xe0) == 0xe0;  // opmask + ZMM halves
  bool tile_state = (xcr0 & 0x60000) == 0x60000;        // XTILECFG + XTILEDATA
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  bool avx2 = (b >> 5) & 1, avx512f = (b >> 16) & 1, avx512bw = (b >> 30) & 1;
  bool avx512_vnni = (c >> 11) & 1;
  bool amx_tile = (d >> 24) & 1, amx_int8 = (d >> 25) & 1;
  unsigned a1, b1, c1, d1;
  __cpuid_count(7, 1, a1, b1, c1, d1);
  bool avx_vnni = (a1 >> 4) & 1;
  f.avx2 = ymm_state && avx2;
  f.avxvnni = f.avx2 && avx_vnni;
  f.avx512vnni = zmm_state && avx512f && avx512bw && avx512_vnni;
  f.amx_int8 = tile_state && amx_tile && amx_int8 && request_amx_permission();
  return f;
}

const X86Features& features() {
  static const X86Features f = probe();
  return f;
}

}  // namespace

bool cpu_has_avx2() { return features().avx2; }
bool cpu_has_avxvnni() { return features().avxvnni; }
bool cpu_has_avx512vnni() { return features().avx512vnni; }
bool cpu_has_amx_int8() { return features().amx_int8; }
#else
bool cpu_has_avx2() { return false; }
bool cpu_has_avxvnni() { return false; }
bool cpu_has_avx512vnni() { return false; }
bool cpu_has_amx_int8() { return false; }
#endif

#if defined(__aarch64__) && defined(__linux__)
// HWCAP_ASIMDDP (bit 20 of AT_HWCAP) and HWCAP2_I8MM (bit 13 of AT_HWCAP2).
bool cpu_has_neon_dot() { return (getauxval(AT_HWCAP) >> 20) & 1; }
bool cpu_has_neon_i8mm() { return (getauxval(AT_HWCAP2) >> 13) & 1; }
#elif defined(__aarch64__) && defined(__APPLE__)
namespace {
bool sysctl_flag(const char* name) {
  int v = 0;
  size_t len = sizeof v;
  return sysctlbyname(name, &v, &len, nullptr, 0) == 0 && v != 0;
}
}  // namespace
bool cpu_has_neon_dot() { return sysctl_flag("hw.optional.arm.FEAT_DotProd"); }
bool cpu_has_neon_i8mm() { return sysctl_flag("hw.optional.arm.FEAT_I8MM"); }
#else
bool cpu_has_neon_dot() { return false; }
bool cpu_has_neon_i8mm() { return false; }
#endif

}  // namespace lucid::kernels
