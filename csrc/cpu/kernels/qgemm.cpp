// The int8 GEMM kernel registry and engine selection
// (lucid.backends.quantized.engine). No threads here: this folder builds
// alone (tests/kernels, cross-compiled checks).
#include "cpu/kernels/qgemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/errors.h"

namespace lucid::kernels {

// ---------------------------------------------------------------- registry --

const std::vector<const QGemmKernel*>& qgemm_kernels() {
  static const std::vector<const QGemmKernel*> all = {
      &qgemm_2x4c1_scalar,
#if defined(__aarch64__)
      &qgemm_4x16c4_neondot, &qgemm_4x16c8_neoni8mm,
#endif
#if defined(__x86_64__)
      &qgemm_5x16c2_avx2, &qgemm_5x16c4_avx2_u7, &qgemm_6x16c4_avxvnni, &qgemm_8x32c4_avx512vnni, &qgemm_32x32c4_amx,
#endif
  };
  return all;
}

namespace {

std::atomic<const QGemmKernel*> g_engine{nullptr};  // null: "auto"

// ---- self-check -------------------------------------------------------------
// A few tiles of one kernel against the plain int64 sum: rows 1 and MR, K
// below, at and past the kernel's padding, random codes and the extreme
// all-amax x all-(-128) tile (the largest products; amax 127 for needs_a7
// kernels). The weights are packed here from the layout QGemmKernel
// documents, independently of the driver's packer. Deterministic (an LCG).
bool tile_ok(const QGemmKernel& k, int rows, int64_t kk, bool extreme, bool sabotage) {
  const int64_t mr = k.mr, nr = k.nr, kr = k.kr;
  const int64_t kp = ((std::max<int64_t>(kk, 1) + k.kpad - 1) / k.kpad) * k.kpad;
  const int amax = k.needs_a7 ? 127 : 255;
  uint32_t state = 0x9e3779b9u ^ static_cast<uint32_t>(kk * 131 + rows);
  auto next = [&state] { state = state * 1664525u + 1013904223u; return state >> 8; };
  std::vector<int> a(static_cast<size_t>(mr * kk), 0), w(static_cast<size_t>(nr * kk), 0);
  for (int64_t i = 0; i < rows * kk; ++i) a[i] = extreme ? amax : static_cast<int>(next() % (amax + 1));
  for (auto& v : w) v = extreme ? -128 : static_cast<int>(next() % 256) - 128;
  std::vector<int8_t> packed(static_cast<size_t>(nr * kp), 0);
  for (int64_t g = 0; g < kp / kr; ++g)
    for (int64_t j = 0; j < nr; ++j)
      for (int64_t r = 0; r < kr; ++r) {
        int64_t kidx = g * kr + r;
        packed[(g * nr + j) * kr + r] = static_cast<int8_t>(kidx < kk ? w[j * kk + kidx] : 0);
      }
  std::vector<uint8_t> p8(static_cast<size_t>(mr * kp), 0);
  std::vector<int16_t> p16(static_cast<size_t>(mr * kp), 0);
  const int shift = k.a_minus128 ? 128 : 0;  // such panels hold a - 128 as int8
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < kk; ++c) {
      p8[i * kp + c] = static_cast<uint8_t>(a[i * kk + c] - shift);
      p16[i * kp + c] = static_cast<int16_t>(a[i * kk + c]);
    }
  std::vector<int32_t> out(static_cast<size_t>(mr * nr), 0x5a5a5a5a);
  k.ukernel(rows, static_cast<size_t>(kp), k.a_int16 ? static_cast<const void*>(p16.data()) : p8.data(),
            static_cast<size_t>(kp), packed.data(), out.data());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < nr; ++j) {
      int64_t want = sabotage ? 1 : 0;
      for (int64_t c = 0; c < kk; ++c) want += int64_t{a[i * kk + c] - shift} * w[j * kk + c];
      if (out[i * nr + j] != want) return false;
    }
  return true;
}

bool kernel_ok(const QGemmKernel& k, bool sabotage) {
  for (int rows : {1, k.mr})
    for (int64_t kk : {int64_t{1}, int64_t{k.kpad} + 1, int64_t{3} * k.kpad + 3, int64_t{67}})
      for (bool extreme : {false, true})
        if (!tile_ok(k, rows, kk, extreme, sabotage)) return false;
  return true;
}

// LUCID_QGEMM_SELFCHECK_FAIL: a comma-separated list of families whose check
// is made to fail (the expected sums are perturbed), to exercise that path.
bool sabotaged(const std::string& family) {
  const char* env = std::getenv("LUCID_QGEMM_SELFCHECK_FAIL");
  if (!env) return false;
  std::string list = std::string(",") + env + ",";
  return list.find("," + family + ",") != std::string::npos;
}

bool family_failed(const std::string& family) {
  for (const QGemmFamilyCheck& c : qgemm_self_check())
    if (c.family == family) return c.supported && !c.verified;
  return false;
}

bool usable(const QGemmKernel& k) { return k.supported() && !family_failed(k.engine); }

const QGemmKernel* find_engine(const std::string& name) {
  for (const QGemmKernel* k : qgemm_kernels())
    if (name == k->engine && !k->needs_a7) return k;
  return nullptr;
}

// The family's kernel for activations below 128, when it has one.
const QGemmKernel* a7_variant(const QGemmKernel* base) {
  for (const QGemmKernel* k : qgemm_kernels())
    if (k->needs_a7 && std::string(k->engine) == base->engine && k->supported()) return k;
  return base;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "'" : ", '") + x + "'";
  return s;
}

}  // namespace

const std::vector<QGemmFamilyCheck>& qgemm_self_check() {
  static const std::vector<QGemmFamilyCheck> checks = [] {
    std::vector<QGemmFamilyCheck> v;
    for (const QGemmKernel* k : qgemm_kernels()) {
      auto it = std::find_if(v.begin(), v.end(), [&](const QGemmFamilyCheck& c) { return c.family == k->engine; });
      if (it == v.end()) {
        v.push_back({k->engine, true, true});
        it = v.end() - 1;
      }
      if (!k->supported()) {  // a family is supported when all its kernels are
        it->supported = false, it->verified = false;
        continue;
      }
      if (it->supported && !kernel_ok(*k, sabotaged(k->engine))) it->verified = false;
    }
    return v;
  }();
  return checks;
}

std::vector<std::string> qgemm_engine_names() {
  std::vector<std::string> v = {"auto"};
  for (const QGemmKernel* k : qgemm_kernels())
    if (!k->needs_a7) v.push_back(k->engine);
  return v;
}

std::vector<std::string> qgemm_available_engines() {
  std::vector<std::string> v = {"auto"};
  for (const QGemmKernel* k : qgemm_kernels())
    if (usable(*k) && !k->needs_a7) v.push_back(k->engine);
  return v;
}

void set_qgemm_engine(const std::string& name) {
  if (name == "auto") {
    g_engine.store(nullptr);
    return;
  }
  const QGemmKernel* k = find_engine(name);
  if (k && k->supported() && family_failed(k->engine))
    throw ValueError("backends.quantized.engine: engine '" + name +
                     "' failed its self-check against the reference kernel on this CPU and is disabled; "
                     "available here: " + joined(qgemm_available_engines()));
  if (!k || !k->supported())
    throw ValueError("backends.quantized.engine: " +
                     std::string(k ? "this CPU cannot run engine '" : "unknown engine '") + name +
                     "'; available here: " + joined(qgemm_available_engines()) +
                     " (known to this build: " + joined(qgemm_engine_names()) + ")");
  g_engine.store(k);
}

std::string qgemm_engine() {
  const QGemmKernel* k = g_engine.load();
  return k ? k->engine : "auto";
}

const QGemmKernel& qgemm_select(int64_t m, bool a7) {
  const QGemmKernel* chosen = g_engine.load();
  if (!chosen) {
    // "auto": the widest instruction set the host has whose self-check
    // passed, decided once. An AMX tile computes 16 rows per instruction, so
    // a product of a few rows wastes most of it and stays on vector units.
    static const std::pair<const QGemmKernel*, const QGemmKernel*> pick = [] {
      const QGemmKernel *small = qgemm_kernels().front(), *large = small;
      for (const QGemmKernel* k : qgemm_kernels()) {
        if (!usable(*k) || k->needs_a7) continue;
        large = k;  // the list is ordered from narrowest to widest
        if (std::string(k->engine) != "amx") small = k;
      }
      return std::make_pair(small, large);
    }();
    chosen = m < 8 ? pick.first : pick.second;
  }
  return a7 ? *a7_variant(chosen) : *chosen;
}

bool qgemm_a7_matters(int64_t m) { return &qgemm_select(m, false) != &qgemm_select(m, true); }

}  // namespace lucid::kernels
