// qd8-f32-qb4w-gemv (int4 weights x dynamically quantized int8 activations):
// the scalar reference against a direct computation from the codes in k
// order (int64 group dots, the float steps of docs/numerics.md), then every
// vector kernel the host runs against the scalar reference, bit for bit, on
// random and edge tiles: nibbles all 0 / all 15, codes all +-127, zero points
// at the grid ends or absent, group sizes 32 / 64 / 96 / 128 / 256 / 512 with K tails
// (K % 64 == 32, groups straddling 64-k chunks), row tails of the 8-row tile.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/kernels/qd8-qb4w-gemv.h"
#include "cpu/kernels/qgemm.h"
#include "cpu/kernels/vquant.h"
#include "harness.h"

namespace lucid::kernel_tests {

namespace {

using kernels::qd8_qb4w_gemv_fn;

struct Variant {
  const char* name;
  qd8_qb4w_gemv_fn fn;
  bool supported;
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
#if defined(__x86_64__) || defined(_M_X64)
  v.push_back({"qd8-f32-qb4w-gemv-1x8-avx2", &kernels::qd8_qb4w_gemv_avx2, kernels::isa_supported("avx2")});
#endif
#if defined(__aarch64__)
  v.push_back({"qd8-f32-qb4w-gemv-1x8-neondot", &kernels::qd8_qb4w_gemv_neondot, kernels::cpu_has_neon_dot()});
#endif
  return v;
}

struct Problem {
  size_t K, G, rows;
  uint8_t flip;
  std::vector<int8_t> xq, xp;
  std::vector<int32_t> sx, zq;  // zq empty: no zero points (z' = 8)
  std::vector<uint8_t> w;
  std::vector<float> s, bias;
  float sa;
};

// fill: 0 random, 1 nibbles 0 and codes +127, 2 nibbles 15 and codes -127, 3 nibbles 15 and codes +127.
Problem make(Context& ctx, size_t K, size_t G, size_t rows, uint8_t flip, int zmode, bool with_bias, int fill) {
  Problem p{K, G, rows, flip, {}, {}, {}, {}, {}, {}, {}, 0.0f};
  std::uniform_int_distribution<int> code(-127, 127), byte(0, 255), z(0, 15);
  std::uniform_real_distribution<float> sc(1e-4f, 0.05f), b(-2.0f, 2.0f);
  p.xq.resize(K);
  for (auto& v : p.xq) v = static_cast<int8_t>(fill == 0 ? code(ctx.rng) : fill == 2 ? -127 : 127);
  p.w.resize(rows * K / 2);
  // The stored byte whose nibbles become 0 / 15 after the flip.
  const uint8_t b0 = static_cast<uint8_t>(0x00 ^ flip), b15 = static_cast<uint8_t>(0xff ^ flip);
  for (auto& v : p.w) v = fill == 0 ? static_cast<uint8_t>(byte(ctx.rng)) : fill == 1 ? b0 : b15;
  const size_t groups = K / G;
  p.s.resize(rows * groups);
  for (auto& v : p.s) v = sc(ctx.rng);
  if (zmode >= 0) {
    p.zq.resize(rows * groups);
    for (size_t i = 0; i < p.zq.size(); ++i) p.zq[i] = zmode == 0 ? 0 : zmode == 1 ? 15 : z(ctx.rng);
  }
  if (with_bias) {
    p.bias.resize(rows);
    for (auto& v : p.bias) v = b(ctx.rng);
  }
  p.sa = sc(ctx.rng);
  p.xp.resize(kernels::qd8_qb4w_padded(K));
  p.sx.resize(groups);
  kernels::qd8_qb4w_prepare_x(K, G, p.xq.data(), p.xp.data(), p.sx.data());
  return p;
}

std::vector<float> run(const Problem& p, qd8_qb4w_gemv_fn fn) {
  std::vector<float> y(p.rows, -1.0f);
  fn(p.K, p.G, p.rows, p.xp.data(), p.sx.data(), p.sa, p.w.data(), p.s.data(), p.zq.empty() ? nullptr : p.zq.data(),
     p.flip, p.bias.empty() ? nullptr : p.bias.data(), y.data());
  return y;
}

// docs/numerics.md directly: codes in k order, q - z per weight, int64 dots.
std::vector<float> direct(const Problem& p) {
  const size_t groups = p.K / p.G;
  std::vector<float> y(p.rows);
  for (size_t n = 0; n < p.rows; ++n) {
    float u = 0.0f;
    for (size_t g = 0; g < groups; ++g) {
      int64_t a = 0;
      int64_t zp = p.zq.empty() ? 8 : p.zq[n * groups + g];
      for (size_t k = g * p.G; k < (g + 1) * p.G; ++k) {
        uint8_t byte = static_cast<uint8_t>(p.w[n * (p.K / 2) + k / 2] ^ p.flip);
        int64_t q = (k & 1) ? byte >> 4 : byte & 15;
        a += int64_t{p.xq[k]} * (q - zp);
      }
      float t = static_cast<float>(a) * p.s[n * groups + g];
      u = u + t;
    }
    float r = u * p.sa;
    y[n] = p.bias.empty() ? r : r + p.bias[n];
  }
  return y;
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

template <class F>
void for_each_problem(Context& ctx, F&& f) {
  for (size_t G : {32, 64, 96, 128, 256, 512})  // 128 / 256: whole chunks summed in int16 (AVX2)
    for (size_t K : {G, 2 * G, 3 * G, 8 * G, 11 * G})  // 11 groups: a block of 8 and a partial one
      for (size_t rows : {1, 3, 8, 9, 17})
        for (uint8_t flip : {uint8_t{0}, uint8_t{0x88}})
          for (int zmode : {-1, 0, 1, 2})
            for (int fill : {0, 1, 2, 3}) {
              if (zmode < 0 && !flip) continue;  // quint4 always has zero points
              if (fill && (rows > 9 || K > 4 * G)) continue;
              Problem p = make(ctx, K, G, rows, flip, zmode, (rows + fill) % 2 == 1, fill);
              f(p);
            }
}

std::string describe(const Problem& p) {
  return "K=" + std::to_string(p.K) + " G=" + std::to_string(p.G) + " rows=" + std::to_string(p.rows) +
         " flip=" + std::to_string(p.flip) + (p.zq.empty() ? " no-z" : "") + (p.bias.empty() ? "" : " bias");
}

const Register scalar_case("qb4w-gemv", "qd8-f32-qb4w-gemv-1x8-scalar", Kind::Test, [](Context& ctx) {
  int n = 0;
  for_each_problem(ctx, [&](const Problem& p) {
    ++n;
    if (!same(run(p, &kernels::qd8_qb4w_gemv_scalar), direct(p))) ctx.fail("scalar vs direct formula " + describe(p));
  });
  std::printf("    %d problems against the formula of docs/numerics.md\n", n);
});

struct RegisterVariants {
  RegisterVariants() {
    for (const Variant& v : variants()) {
      Register("qb4w-gemv", v.name, Kind::Test, [v](Context& ctx) {
        if (!v.supported) return (void)std::printf("    skipped: this CPU lacks the ISA\n");
        int n = 0;
        for_each_problem(ctx, [&](const Problem& p) {
          ++n;
          const std::vector<float> y = run(p, v.fn);
          if (avx_upper_in_use()) ctx.fail(std::string(v.name) + " returned without vzeroupper, " + describe(p));
          if (!same(y, run(p, &kernels::qd8_qb4w_gemv_scalar))) ctx.fail(std::string(v.name) + " " + describe(p));
        });
        std::printf("    %d problems equal the scalar reference\n", n);
      });
      Register("qb4w-gemv", v.name, Kind::Bench, [v](Context& ctx) {
        if (!v.supported) return (void)std::printf("    skipped: this CPU lacks the ISA\n");
        const size_t K = 4096, G = 128, N = ctx.quick ? 1024 : 4096;
        Problem p = make(ctx, K, G, N, 0x88, -1, false, 0);
        std::vector<float> y(N);
        for (auto [name, fn] : {std::pair<const char*, qd8_qb4w_gemv_fn>{"scalar", &kernels::qd8_qb4w_gemv_scalar},
                                {v.name, v.fn}}) {
          double t = time_per_call([&] { fn(K, G, N, p.xp.data(), p.sx.data(), p.sa, p.w.data(), p.s.data(), nullptr,
                                            p.flip, nullptr, y.data()); }, ctx.quick ? 0.1 : 0.25);
          std::printf("    %-34s N=%zu K=%zu G=%zu %7.3f ms %7.1f GOP/s %6.2f GB/s of packed weights\n", name, N, K, G,
                      t * 1e3, 2.0 * N * K / t / 1e9, N * K / 2 / t / 1e9);
        }
      });
    }
  }
} register_variants;

}  // namespace

}  // namespace lucid::kernel_tests
