// The int8 GEMM kernel registry and engine selection
// (lucid.backends.quantized.engine). No threads here: this folder builds
// alone (tests/kernels, cross-compiled checks).
#include "cpu/kernels/qgemm.h"

#include <algorithm>
#include <atomic>

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
      &qgemm_5x16c2_avx2, &qgemm_5x16c4_avx2_u7, &qgemm_6x16c4_avxvnni, &qgemm_8x16c4_avx512vnni, &qgemm_16x16c4_amx,
#endif
  };
  return all;
}

namespace {

std::atomic<const QGemmKernel*> g_engine{nullptr};  // null: "auto"

const QGemmKernel* find_engine(const std::string& name) {
  for (const QGemmKernel* k : qgemm_kernels())
    if (name == k->engine && !k->needs_a7) return k;
  return nullptr;
}

// The family's kernel for activations below 128, when it has one.
const QGemmKernel* a7_variant(const QGemmKernel* base) {
  for (const QGemmKernel* k : qgemm_kernels())
    if (k->needs_a7 && std::string(k->engine) == base->engine) return k;
  return base;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "'" : ", '") + x + "'";
  return s;
}

}  // namespace

std::vector<std::string> qgemm_engine_names() {
  std::vector<std::string> v = {"auto"};
  for (const QGemmKernel* k : qgemm_kernels())
    if (!k->needs_a7) v.push_back(k->engine);
  return v;
}

std::vector<std::string> qgemm_available_engines() {
  std::vector<std::string> v = {"auto"};
  for (const QGemmKernel* k : qgemm_kernels())
    if (k->supported() && !k->needs_a7) v.push_back(k->engine);
  return v;
}

void set_qgemm_engine(const std::string& name) {
  if (name == "auto") {
    g_engine.store(nullptr);
    return;
  }
  const QGemmKernel* k = find_engine(name);
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
    // "auto": the widest instruction set the host has. A 16-row AMX tile
    // wastes most of its work on a few rows, so small M stays on vector units.
    chosen = qgemm_kernels().front();
    for (const QGemmKernel* k : qgemm_kernels()) {
      if (!k->supported() || k->needs_a7) continue;
      if (std::string(k->engine) == "amx" && m < 8) continue;
      chosen = k;  // the list is ordered from narrowest to widest
    }
  }
  return a7 ? *a7_variant(chosen) : *chosen;
}

}  // namespace lucid::kernels
