// Standalone test and bench driver of the quantization-family microkernels
// (csrc/cpu/kernels/vquant.h): every table this CPU can run is compared bit
// for bit with the scalar reference on random and edge-case data (NaN with
// payloads, +-inf, +-0, ties, clamp edges, zero points at the grid ends,
// every tail length), then timed. No Python, no lucid core: it also builds
// for aarch64 and runs under qemu (scripts/check-arm64).
//
//   vquant-test [--bench]      exit status 0 when every variant matches
#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <type_traits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cpu/kernels/qb4w-gemv.h"
#include "cpu/kernels/test/upper-state.h"
#include "cpu/kernels/vquant.h"

using namespace lucid::kernels;
using lucid::kernel_checks::avx_upper_in_use;

namespace {

std::mt19937 rng(12345);
int failures = 0, checks = 0;

float from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// Inputs that exercise every branch: ordinary values, exact ties of x / s,
// clamp edges, NaN (quiet, signalling, negative, with payload), infinities,
// signed zeros, huge and tiny magnitudes.
std::vector<float> make_inputs(size_t n, float s) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 15), k(-300, 300);
  const float specials[] = {from_bits(0x7fc00000), from_bits(0x7f800001), from_bits(0xffc12345), from_bits(0x7fffffff),
                            INFINITY, -INFINITY, 0.0f, -0.0f, 3e38f, -3e38f, 1e-40f, -1e-45f};
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    int c = pick(rng);
    if (c < 8) x[i] = nd(rng) * s * 100.0f;
    else if (c < 11) x[i] = (static_cast<float>(k(rng)) + 0.5f) * s;  // ties of x / s (mostly)
    else if (c < 13) x[i] = static_cast<float>(k(rng)) * s;
    else x[i] = specials[std::uniform_int_distribution<int>(0, 11)(rng)];
  }
  return x;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

void report(bool ok, const char* isa, const char* what, size_t rows, size_t len, bool per_elem, const char* grid) {
  ++checks;
  if (!ok) {
    ++failures;
    if (failures < 20)
      std::printf("MISMATCH %s %s rows=%zu len=%zu per_elem=%d grid=%s\n", isa, what, rows, len, int(per_elem), grid);
  }
}

struct Grid {
  const char* name;
  int64_t qmin, qmax;
  float lo, hi;
};

const Grid kGrids[] = {{"qint8", -128, 127, -128.0f, 127.0f},
                       {"quint8", 0, 255, 0.0f, 255.0f},
                       {"qint4", -8, 7, -8.0f, 7.0f},
                       {"qint8 reduce_range", -64, 63, -64.0f, 63.0f},
                       {"quint8 [3, 200]", 3, 200, 3.0f, 200.0f},
                       {"qint32", INT32_MIN, INT32_MAX, -2147483648.0f, 2147483520.0f},
                       {"wide narrow grid", -(1 << 30), (1 << 30) - 1, -1073741824.0f, 1073741760.0f}};

std::vector<float> make_scales(size_t n) {
  const float fixed[] = {0.00214854861f, 1.0f, 0.0173f, 3.5f, 1e-6f, 1e20f};
  std::uniform_real_distribution<float> u(-8.0f, 2.0f);
  std::vector<float> s(n);
  for (size_t i = 0; i < n; ++i) s[i] = (i % 3 == 0) ? fixed[(i / 3) % 6] : std::pow(2.0f, u(rng)) * 1.37f;
  return s;
}

// Zero points inside the grid, including both ends.
std::vector<int32_t> make_zps(size_t n, const Grid& g) {
  std::uniform_int_distribution<int64_t> u(g.qmin, g.qmax);
  std::vector<int32_t> z(n);
  for (size_t i = 0; i < n; ++i) z[i] = static_cast<int32_t>(i % 4 == 0 ? g.qmin : i % 4 == 1 ? g.qmax : u(rng));
  return z;
}

template <class Q>
void check_quantize(const VQuantKernels& k, vquantize_fn<Q> fast, vquantize_fn<Q> ref, const Grid& g, size_t rows,
                    size_t len, bool per_elem, unsigned stream) {
  size_t np = per_elem ? len : rows;
  auto s = make_scales(np ? np : 1);
  auto z = make_zps(np ? np : 1, g);
  auto x = make_inputs(rows * len, s[0]);
  std::vector<Q> a(rows * len), b(rows * len);
  fast(rows, len, x.data(), a.data(), s.data(), z.data(), per_elem | stream, g.lo, g.hi);
  ref(rows, len, x.data(), b.data(), s.data(), z.data(), per_elem, g.lo, g.hi);
  report(same_bytes(a, b), k.isa, "quantize", rows, len, per_elem, g.name);
  // Again without NaN: blocks free of NaN take the AVX2 byte kernels' packed
  // path, whose clamp below lo relies on vcvttps2dq + saturating packs (values
  // below -2^31, -inf, -0, huge positives).
  const float finite[] = {-INFINITY, -3e38f, -2147483904.0f, -2147483648.0f, -1e9f, -0.0f, 3e38f, INFINITY};
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] != x[i]) x[i] = finite[i % 8];
  fast(rows, len, x.data(), a.data(), s.data(), z.data(), per_elem | stream, g.lo, g.hi);
  ref(rows, len, x.data(), b.data(), s.data(), z.data(), per_elem, g.lo, g.hi);
  report(same_bytes(a, b), k.isa, "quantize without NaN", rows, len, per_elem, g.name);
}

template <class Q>
void check_dequantize(const VQuantKernels& k, vdequantize_fn<Q> fast, vdequantize_fn<Q> ref, size_t rows,
                      size_t len, bool per_elem, unsigned stream) {
  size_t np = per_elem ? len : rows;
  Grid g = std::is_signed_v<Q> ? kGrids[0] : kGrids[1];
  auto s = make_scales(np ? np : 1);
  auto z = make_zps(np ? np : 1, g);
  std::vector<Q> q(rows * len);
  for (auto& v : q) v = static_cast<Q>(rng());
  std::vector<float> a(rows * len), b(rows * len);
  fast(rows, len, q.data(), a.data(), s.data(), z.data(), per_elem | stream);
  ref(rows, len, q.data(), b.data(), s.data(), z.data(), per_elem);
  report(same_bytes(a, b), k.isa, "dequantize", rows, len, per_elem, g.name);
}

void check_fake_quantize(const VQuantKernels& k, const Grid& g, size_t rows, size_t len, bool per_elem,
                         unsigned stream) {
  size_t np = per_elem ? len : rows;
  auto s = make_scales(np ? np : 1);
  auto z = make_zps(np ? np : 1, g);
  auto x = make_inputs(rows * len, s[0]);
  std::vector<float> ya(rows * len), yb(rows * len);
  std::vector<uint8_t> ma(rows * len, 7), mb(rows * len, 7);
  k.fake_quantize(rows, len, x.data(), ya.data(), ma.data(), s.data(), z.data(), per_elem | stream, g.lo, g.hi);
  vquant_scalar().fake_quantize(rows, len, x.data(), yb.data(), mb.data(), s.data(), z.data(), per_elem, g.lo, g.hi);
  report(same_bytes(ya, yb) && same_bytes(ma, mb), k.isa, "fake_quantize", rows, len, per_elem, g.name);
}

void check_bytes_ops(const VQuantKernels& k, size_t n, unsigned stream) {
  std::vector<uint8_t> m(n), c(2 * n), pa(n), pb(n), ua(2 * n), ub(2 * n);
  std::vector<uint32_t> dy(n), da(n), db(n);
  for (size_t i = 0; i < n; ++i) m[i] = static_cast<uint8_t>(rng() % 3), dy[i] = static_cast<uint32_t>(rng());
  for (auto& v : c) v = static_cast<uint8_t>(rng());
  k.mask_grad(n, dy.data(), m.data(), da.data(), stream);
  vquant_scalar().mask_grad(n, dy.data(), m.data(), db.data(), 0);
  report(same_bytes(da, db), k.isa, "mask_grad", 1, n, false, "-");
  k.pack4(n, c.data(), pa.data());
  vquant_scalar().pack4(n, c.data(), pb.data());
  report(same_bytes(pa, pb), k.isa, "pack_int4", 1, n, false, "-");
  for (bool sgn : {false, true}) {
    k.unpack4(n, pa.data(), ua.data(), sgn);
    vquant_scalar().unpack4(n, pa.data(), ub.data(), sgn);
    report(same_bytes(ua, ub), k.isa, "unpack_int4", 1, n, false, sgn ? "qint4" : "quint4");
  }
}

void check_table(const VQuantKernels& k) {
  const VQuantKernels& r = vquant_scalar();
  std::vector<size_t> lens;
  for (size_t n = 0; n <= 80; ++n) lens.push_back(n);
  for (size_t n : {127, 128, 129, 255, 1000, 4099}) lens.push_back(n);
  // Streamed stores (kStream) start at an aligned output element: every
  // length checks both modes, so the unaligned heads are covered too.
  for (size_t len : lens)
    for (size_t rows : {1, 3})
      for (bool pe : {false, true})
        for (unsigned st : {0u, kStream}) {
          for (const Grid& g : kGrids) {
            if (g.qmax <= 127 && g.qmin >= -128)
              check_quantize<int8_t>(k, k.quantize_qs8, r.quantize_qs8, g, rows, len, pe, st);
            if (g.qmin >= 0 && g.qmax <= 255)
              check_quantize<uint8_t>(k, k.quantize_qu8, r.quantize_qu8, g, rows, len, pe, st);
            check_quantize<int32_t>(k, k.quantize_qs32, r.quantize_qs32, g, rows, len, pe, st);
            if (g.qmax - g.qmin < (int64_t{1} << 31)) check_fake_quantize(k, g, rows, len, pe, st);
          }
          check_dequantize<int8_t>(k, k.dequantize_qs8, r.dequantize_qs8, rows, len, pe, st);
          check_dequantize<uint8_t>(k, k.dequantize_qu8, r.dequantize_qu8, rows, len, pe, st);
        }
  for (size_t n : lens)
    for (unsigned st : {0u, kStream}) check_bytes_ops(k, n, st);
}

// int4 weight-only GEMV: every kernel against the scalar reference, for
// both grids (flip), zero points at the ends, several group sizes and rows;
// 17 and 40 groups reach the AVX-512 kernel's 16-group zero-point loop and its tail.
void check_gemv(const char* isa, qb4w_gemv_fn fast) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (size_t G : {32, 64, 128})
    for (size_t K : {G, 2 * G, 4 * G + (G == 32 ? 32 * 5 : 0), 17 * G, 40 * G})
      for (size_t rows : {1, 3, 8})
        for (uint8_t flip : {uint8_t{0}, uint8_t{0x88}})
          for (bool with_bias : {false, true}) {
            if (K % G) continue;
            size_t groups = K / G;
            std::vector<float> x(K), xp(K), sx(groups), s(rows * groups), bias(rows), ya(rows), yb(rows);
            std::vector<uint8_t> w(rows * K / 2);
            std::vector<int32_t> zq(rows * groups);
            for (auto& v : x) v = nd(rng) * 3.0f;
            for (auto& v : w) v = static_cast<uint8_t>(rng());
            for (size_t i = 0; i < s.size(); ++i) {
              s[i] = std::abs(nd(rng)) * 0.01f + 1e-4f;
              zq[i] = static_cast<int32_t>(i % 3 == 0 ? 0 : i % 3 == 1 ? 15 : rng() % 16);  // z' ends of the grid
            }
            for (auto& v : bias) v = nd(rng);
            f32_qb4w_prepare_x(K, G, x.data(), xp.data(), sx.data());
            const float* b = with_bias ? bias.data() : nullptr;
            fast(K, G, rows, xp.data(), sx.data(), w.data(), s.data(), zq.data(), flip, b, ya.data());
            report(!avx_upper_in_use(), isa, "qb4w_gemv returns with vzeroupper", rows, K, false, "qint4");
            f32_qb4w_gemv_scalar(K, G, rows, xp.data(), sx.data(), w.data(), s.data(), zq.data(), flip, b, yb.data());
            report(same_bytes(ya, yb), isa, "qb4w_gemv", rows, K, false, flip ? "qint4" : "quint4");
            if (!flip) continue;
            // No zero points (zq null): every z' is 8, as an explicit array of eights gives.
            std::vector<int32_t> eights(zq.size(), 8);
            fast(K, G, rows, xp.data(), sx.data(), w.data(), s.data(), nullptr, flip, b, ya.data());
            f32_qb4w_gemv_scalar(K, G, rows, xp.data(), sx.data(), w.data(), s.data(), eights.data(), flip, b, yb.data());
            report(same_bytes(ya, yb), isa, "qb4w_gemv (zq null)", rows, K, false, "qint4");
          }
}

template <class F>
double best_seconds(F&& f) {
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void bench_table(const VQuantKernels& k, unsigned st) {
  const size_t n = size_t{1} << 24;  // 16M elements: 64 MB of float32
  std::vector<float> x(n), y(n);
  std::vector<int8_t> q(n);
  std::vector<uint8_t> m(n);
  for (size_t i = 0; i < n; ++i) x[i] = std::sin(static_cast<float>(i)) * 2.0f;
  float s = 0.0173f;
  int32_t z = 3;
  double tq = best_seconds([&] { k.quantize_qs8(1, n, x.data(), q.data(), &s, &z, st, -128.0f, 127.0f); });
  double td = best_seconds([&] { k.dequantize_qs8(1, n, q.data(), y.data(), &s, &z, st); });
  double tf = best_seconds([&] { k.fake_quantize(1, n, x.data(), y.data(), m.data(), &s, &z, st, -128.0f, 127.0f); });
  double tc = best_seconds([&] { std::memcpy(y.data(), x.data(), 4 * n); });
  std::printf("  %-7s%s quantize %6.2f GB/s  dequantize %6.2f GB/s  fake_quantize %6.2f GB/s  (memcpy %6.2f GB/s)\n",
              k.isa, st ? " stream" : "       ", 5.0 * n / tq / 1e9, 5.0 * n / td / 1e9, 9.0 * n / tf / 1e9,
              8.0 * n / tc / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  bool bench = argc > 1 && std::string(argv[1]) == "--bench";
  std::vector<const VQuantKernels*> tables = {&vquant_scalar()};
  for (const VQuantKernels* k : {vquant_avx2(), vquant_avx512(), vquant_neon()}) {
    if (!k) continue;
    if (isa_supported(k->isa)) tables.push_back(k);
    else std::printf("%s: compiled, not supported by this CPU (skipped)\n", k->isa);
  }
  for (const VQuantKernels* k : tables) {
    if (k == &vquant_scalar()) continue;
    int before = failures;
    int checks_before = checks;
    check_table(*k);
    std::printf("%s: %d checks, %d mismatches against scalar\n", k->isa, checks - checks_before, failures - before);
  }
  const char* gemv_isa = "scalar";
  qb4w_gemv_fn gemv = f32_qb4w_gemv_best(&gemv_isa);
  std::vector<std::pair<const char*, qb4w_gemv_fn>> gemvs;
#if defined(__x86_64__)
  if (isa_supported("avx2")) gemvs.push_back({"avx2", &f32_qb4w_gemv_avx2});
  if (isa_supported("avx512")) gemvs.push_back({"avx512", &f32_qb4w_gemv_avx512});
#endif
#if defined(__aarch64__)
  gemvs.push_back({"neon", &f32_qb4w_gemv_neon});
#endif
  for (auto [isa, fn] : gemvs) {
    int before = failures, checks_before = checks;
    check_gemv(isa, fn);
    std::printf("qb4w-gemv %s: %d checks, %d mismatches against scalar\n", isa, checks - checks_before,
                failures - before);
  }
  if (tables.size() == 1) std::printf("no vector table runs on this CPU; only the scalar reference exists\n");
  if (bench) {
    std::printf("bench (1 thread, 16M elements, per-tensor int8):\n");
    for (const VQuantKernels* k : tables)
      for (unsigned st : {0u, kStream}) bench_table(*k, st);
    const size_t K = 4096, N = 4096, G = 128;
    std::vector<float> x(K, 0.5f), xp(K), sx(K / G), s(N * K / G, 0.01f), y(N);
    std::vector<uint8_t> w(N * K / 2, 0x5a), copy(N * K / 2);
    std::vector<int32_t> zq(N * K / G, 8);
    f32_qb4w_prepare_x(K, G, x.data(), xp.data(), sx.data());
    for (auto [name, fn] : {std::pair<const char*, qb4w_gemv_fn>{"scalar", &f32_qb4w_gemv_scalar}, {gemv_isa, gemv}}) {
      double t = best_seconds([&] { fn(K, G, N, xp.data(), sx.data(), w.data(), s.data(), zq.data(), 0, nullptr, y.data()); });
      std::printf("  qb4w-gemv %-7s 4096x4096 g128: %7.3f ms, %6.2f GB/s of packed weights\n", name, t * 1e3,
                  w.size() / t / 1e9);
    }
    double tc = best_seconds([&] { std::memcpy(copy.data(), w.data(), w.size()); });
    std::printf("  memcpy of the packed weights (8 MB):  %7.3f ms\n", tc * 1e3);
  }
  std::printf("%s\n", failures ? "FAIL" : "OK");
  return failures ? 1 : 0;
}
