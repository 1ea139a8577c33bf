// The float-grid and block-format kernels (csrc/cpu/float_grid_simd.h): every
// table this CPU supports against the scalar element functions of
// core/minifloat.h (the scalar table included), on every tail length and
// misalignment, every special value (NaN with payloads and signs, +-inf,
// +-0, float32 subnormals, format subnormals, ties at every rounding shift,
// the max-finite boundary), both saturate modes, per-run and per-element
// scales; every encoding on a stratified set of 2^24 float32 patterns per
// case (every exponent, the top 12 mantissa bits, low-bit patterns), or all
// 2^32 with LUCID_EXHAUSTIVE=1. Then the bandwidth of each kernel.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/float_grid_simd.h"
#include "cpu/kernels/vquant.h"
#include "harness.h"

namespace lucid::kernel_tests {
namespace {

using cpu::fgrid::Encoding;
using cpu::fgrid::Kernels;
using minifloat::BlockMode;
using minifloat::Format;

std::vector<const Kernels*> tables() {
  std::vector<const Kernels*> t{&cpu::fgrid::scalar()};
  if (cpu::fgrid::avx2() && kernels::isa_supported("avx2")) t.push_back(cpu::fgrid::avx2());
  if (cpu::fgrid::avx512() && kernels::isa_supported("avx512") && kernels::isa_supported("avx2"))
    t.push_back(cpu::fgrid::avx512());
  return t;
}

float fbits(uint32_t u) { return minifloat::float_of(u); }

// Bit-equal, or both NaN (a float output's NaN payload is not part of the contract).
bool same_float(float a, float b) {
  return minifloat::bits_of(a) == minifloat::bits_of(b) || (a != a && b != b);
}

struct Enc {
  const char* name;
  Encoding e;
};
std::vector<Enc> encodings() {
  using cpu::fgrid::grid_encoding;
  return {{"e4m3fn", grid_encoding(minifloat::kE4M3FN, false)}, {"e4m3fn-sat", grid_encoding(minifloat::kE4M3FN, true)},
          {"e5m2", grid_encoding(minifloat::kE5M2, false)},     {"e5m2-sat", grid_encoding(minifloat::kE5M2, true)},
          {"e2m1fn", grid_encoding(minifloat::kE2M1FN, false)}, {"e2m1fn-sat", grid_encoding(minifloat::kE2M1FN, true)},
          {"mx-e4m3", {minifloat::kE4M3FN, true, 0x7e, true}},  {"mx-e2m1", {minifloat::kE2M1FN, true, 0x7, false}}};
}

// Values that decide conversions: specials, float32 subnormals, each
// format's subnormals, ties and near-ties at the formats' shifts, the
// max-finite boundary (and the midpoint past it), plus random normals.
std::vector<float> edge_inputs(std::mt19937_64& rng, size_t n) {
  std::vector<float> special = {fbits(0x7fc00000), fbits(0xffc00000), fbits(0x7f800001), fbits(0xff812345),
                                INFINITY, -INFINITY, 0.0f, -0.0f, fbits(1), fbits(0x807fffff), fbits(0x00400000),
                                448.0f, 464.0f, 464.0001f, 463.99997f, 480.0f, -448.0f, -464.0f, 57344.0f, 61440.0f,
                                61439.996f, -61440.0f, 6.0f, 7.0f, 6.9999995f, -7.0f, 3.4028235e38f, -3.4028235e38f};
  for (int e = -20; e <= 2; ++e)  // format subnormals and ties between them
    for (float m : {0.5f, 1.0f, 1.5f, 2.5f, 0.75f, 1.25f, 3.0f})
      special.push_back(std::ldexp(m, e)), special.push_back(-std::ldexp(m, e));
  std::uniform_int_distribution<uint32_t> bits;
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 9), sp(0, static_cast<int>(special.size()) - 1), ex(-30, 20);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    const int c = pick(rng);
    if (c < 3) x[i] = special[sp(rng)];
    else if (c < 5) x[i] = fbits(bits(rng));
    else if (c < 7) x[i] = std::ldexp(1.0f + static_cast<float>(bits(rng) % 64) / 64.0f, ex(rng)) * (c % 2 ? -1.0f : 1.0f);
    else x[i] = nd(rng) * 100.0f;
  }
  return x;
}

void test_encode(Context& ctx) {
  std::vector<float> x = edge_inputs(ctx.rng, 4096 + 8);
  std::vector<float> s(x.size());
  for (size_t i = 0; i < s.size(); ++i) s[i] = i % 3 == 0 ? 1.0f : (i % 3 == 1 ? 0.37f : 2048.0f);
  for (const Kernels* k : tables())
    for (const Enc& en : encodings()) {
      int bad = 0;
      for (size_t len = 0; len <= 200 && !bad; ++len)
        for (size_t off = 0; off < 16 && !bad; ++off)  // every 4-byte residue of 64 (AVX-512's streamed head)
          for (int pe = 0; pe < 2 && !bad; ++pe) {
            std::vector<uint8_t> q(len + 1, 0xa5);
            const float* px = x.data() + off + len * 13 % 3000;
            const float* ps = s.data() + off;
            k->encode(len, px, q.data(), ps, pe == 1, en.e);
            for (size_t i = 0; i < len; ++i) {
              const uint32_t want = cpu::fgrid::encode_one(px[i] / ps[pe ? i : 0] + 0.0f, en.e);
              if (q[i] != want) {
                ctx.fail(std::string(k->isa) + " encode " + en.name + " len " + std::to_string(len) + " x=" +
                         std::to_string(minifloat::bits_of(px[i])) + " got " + std::to_string(q[i]) + " want " +
                         std::to_string(want));
                bad = 1;
                break;
              }
            }
            if (q[len] != 0xa5) {
              ctx.fail(std::string(k->isa) + " encode wrote past the end");
              bad = 1;
            }
          }
      // The grids' encode equals encode_select (the GPU stream's formula) too.
      if (en.e.nan_keeps_sign && en.e.nan_code == (en.e.f.nan_code ? en.e.f.nan_code : en.e.f.max_code))
        for (float v : x) {
          const uint32_t u = minifloat::bits_of(v + 0.0f);
          if (minifloat::encode_select(u, en.e.f, en.e.saturate) != minifloat::encode(u, en.e.f, en.e.saturate)) {
            ctx.fail(std::string("encode_select != encode ") + en.name);
            break;
          }
        }
    }
}

// Encode, scale 1: a stratified 2^24-pattern set (or all 2^32) through each vector table, in chunks.
void test_encode_patterns(Context& ctx) {
  const bool all = std::getenv("LUCID_EXHAUSTIVE") && std::string(std::getenv("LUCID_EXHAUSTIVE")) == "1";
  const size_t chunk = size_t{1} << 20;
  std::vector<float> x(chunk);
  std::vector<uint8_t> q(chunk);
  const float one = 1.0f;
  const uint64_t total = all ? (uint64_t{1} << 32) : (uint64_t{1} << 24);
  for (const Kernels* k : tables()) {
    if (std::string(k->isa) == "scalar") continue;  // the scalar table is encode_one itself
    for (const Enc& en : encodings()) {
      const char* only = std::getenv("LUCID_FLOAT_GRID_ONLY");  // one encoding by name (long exhaustive runs)
      if (only && std::string(only) != en.name) continue;
      bool bad = false;
      for (uint64_t start = 0; start < total && !bad; start += chunk) {
        for (size_t i = 0; i < chunk; ++i) {
          const uint64_t j = start + i;
          // stratified: sign, exponent and top 12 mantissa bits from j; 4 low-11-bit patterns
          const uint32_t low[4] = {0, 1, 0x400, 0x7ff};
          x[i] = all ? fbits(static_cast<uint32_t>(j))
                     : fbits(static_cast<uint32_t>(((j >> 2) << 11) | low[j & 3]));
        }
        k->encode(chunk, x.data(), q.data(), &one, false, en.e);
        for (size_t i = 0; i < chunk; ++i)
          if (q[i] != cpu::fgrid::encode_one(x[i] + 0.0f, en.e)) {
            bad = !ctx.fail(std::string(k->isa) + " encode " + en.name + " pattern " +
                            std::to_string(minifloat::bits_of(x[i])));
            break;
          }
      }
      std::printf("    %s %s: %s float32 patterns\n", k->isa, en.name, all ? "all 2^32" : "2^24 stratified");
    }
  }
}

void test_decode(Context& ctx) {
  std::vector<uint8_t> c(4096 + 64);
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<uint8_t>(i * 97 + (i >> 8));
  std::vector<float> s(c.size());
  for (size_t i = 0; i < s.size(); ++i) s[i] = i % 4 == 0 ? 0.5f : (i % 4 == 1 ? 1e-30f : (i % 4 == 2 ? 3e30f : -0.3f));
  const std::pair<const char*, Format> fmts[] = {{"e4m3fn", minifloat::kE4M3FN}, {"e5m2", minifloat::kE5M2},
                                                 {"e2m1fn", minifloat::kE2M1FN}};
  for (const Kernels* k : tables())
    for (const auto& [name, f] : fmts) {
      bool bad = false;
      for (size_t len = 0; len <= 300 && !bad; len += (len < 80 ? 1 : 37))
        for (size_t off = 0; off < 16 && !bad; ++off)  // every 4-byte residue of 64 (AVX-512's streamed head)
          for (int pe = 0; pe < 2 && !bad; ++pe)
            for (int st = 0; st < 2 && !bad; ++st) {
              std::vector<float> y(len + 17, 1234.5f);
              float* py = y.data() + off;  // misaligned starts for the streamed path
              k->decode(len, c.data() + off, py, s.data() + off, pe == 1, f, st == 1);
              for (size_t i = 0; i < len; ++i) {
                const float want = minifloat::decode(c[off + i], f) * s[off + (pe ? i : 0)];
                if (!same_float(py[i], want)) {
                  bad = !ctx.fail(std::string(k->isa) + " decode " + name + " code " + std::to_string(c[off + i]));
                  break;
                }
              }
              if (py[len] != 1234.5f) bad = !ctx.fail(std::string(k->isa) + " decode wrote past the end");
            }
    }
}

void test_fake(Context& ctx) {
  std::vector<float> x = edge_inputs(ctx.rng, 2048 + 8);
  std::vector<float> s(x.size());
  for (size_t i = 0; i < s.size(); ++i) s[i] = i % 3 == 0 ? 1.0f : (i % 3 == 1 ? 0.37f : 2048.0f);
  for (const Kernels* k : tables())
    for (const Enc& en : encodings()) {
      if (!en.e.nan_keeps_sign) continue;  // the grids' encodings (and MLX's to_fp8)
      bool bad = false;
      const float mx = minifloat::decode(en.e.f.max_code, en.e.f);
      for (size_t len = 0; len <= 100 && !bad; ++len)
        for (int pe = 0; pe < 2 && !bad; ++pe) {
          std::vector<float> y(len + 1, 55.0f);
          std::vector<uint8_t> m(len + 1, 0xa5);
          const float* px = x.data() + len * 7 % 1900;
          k->fake(len, px, y.data(), m.data(), s.data(), pe == 1, en.e);
          for (size_t i = 0; i < len && !bad; ++i) {
            const float si = s[pe ? i : 0], t = px[i] / si;
            const float want = minifloat::decode(cpu::fgrid::encode_one(t + 0.0f, en.e), en.e.f) * si;
            if (!same_float(y[i], want) || m[i] != (std::fabs(t) <= mx ? 1 : 0))
              bad = !ctx.fail(std::string(k->isa) + " fake " + en.name + " len " + std::to_string(len));
          }
          if (y[len] != 55.0f || m[len] != 0xa5) bad = !ctx.fail(std::string(k->isa) + " fake wrote past the end");
        }
    }
}

// Rows of groups that exercise every block decision: random, constant, zero,
// all-subnormal, huge, with NaN, with +-inf, ties at the element grid.
// ordinary: only groups with a nonzero, finite amax (constants, quarter steps
// with their FP4 ties and signed zeros, normal draws), so that whole batches of
// sixteen groups take the AVX-512 kernels' plain loops.
std::vector<float> block_rows(std::mt19937_64& rng, int64_t rows, int64_t K, bool ordinary = false) {
  std::vector<float> w = edge_inputs(rng, static_cast<size_t>(rows * K));
  std::uniform_int_distribution<int> kind(0, 9);
  constexpr int kOrdinary[] = {1, 3, 5, 5};
  for (int64_t g = 0; g < rows * K / 16; ++g) {
    float* p = w.data() + g * 16;
    switch (ordinary ? kOrdinary[rng() % 4] : kind(rng)) {
      case 0: for (int i = 0; i < 16; ++i) p[i] = 0.0f; break;
      case 1: for (int i = 0; i < 16; ++i) p[i] = 3.25f; break;
      case 2: for (int i = 0; i < 16; ++i) p[i] = fbits(static_cast<uint32_t>(rng() % 0x800000)) * (i % 2 ? -1.0f : 1.0f); break;
      case 3: for (int i = 0; i < 16; ++i) p[i] = static_cast<float>(static_cast<int>(rng() % 13) - 6) * 0.25f; break;
      case 4: for (int i = 0; i < 16; ++i) p[i] = static_cast<float>(rng() % 1000) * 1e35f; break;
      default: {
        std::normal_distribution<float> nd(0.0f, 1.0f);
        for (int i = 0; i < 16; ++i) p[i] = nd(rng);  // no specials: ordinary groups
      }
    }
  }
  return w;
}

void test_blocks(Context& ctx) {
  const std::pair<const char*, BlockMode> modes[] = {
      {"mxfp8", BlockMode::Mxfp8}, {"mxfp4", BlockMode::Mxfp4}, {"nvfp4", BlockMode::Nvfp4}};
  const Kernels& ref = cpu::fgrid::scalar();
  for (const Kernels* k : tables())
    for (const auto& [name, mode] : modes)
      for (int64_t K : {32, 64, 96, 160, 256, 416, 512, 544, 800, 1024, 4096})
        for (int64_t rows : {1, 3}) {
          std::vector<float> w = block_rows(ctx.rng, rows, K, K == 4096 && rows == 3);
          const int bits = minifloat::block_bits(mode), G = minifloat::block_group(mode);
          const size_t nw = static_cast<size_t>(rows * K * bits / 32), ns = static_cast<size_t>(rows * K / G);
          std::vector<uint32_t> words(nw + 1, 0xdeadbeef), rw(nw);
          std::vector<uint8_t> sc(ns + 1, 0xa5), rs(ns);
          k->block_quantize(w.data(), rows, K, mode, words.data(), sc.data());
          if (avx_upper_in_use()) ctx.fail(std::string(k->isa) + " block_quantize returned without vzeroupper");
          minifloat::block_quantize_rows(w.data(), rows, K, mode, rw.data(), rs.data());
          if (std::memcmp(words.data(), rw.data(), nw * 4) || std::memcmp(sc.data(), rs.data(), ns) ||
              words[nw] != 0xdeadbeef || sc[ns] != 0xa5) {
            ctx.fail(std::string(k->isa) + " block_quantize " + name + " K " + std::to_string(K));
            continue;
          }
          // Streamed and not; the output 64-byte aligned (AVX-512 streams only
          // then), 32-byte aligned (AVX2 streams) and float-aligned.
          for (int st = 0; st < 2; ++st)
            for (size_t skew : {0, 8, 1}) {
              std::vector<float> buf(static_cast<size_t>(rows * K) + 32, 77.0f), ry(static_cast<size_t>(rows * K));
              const uintptr_t at = reinterpret_cast<uintptr_t>(buf.data());
              float* y = buf.data() + ((64 - (at & 63)) & 63) / 4 + skew;
              k->block_dequantize(words.data(), sc.data(), rows, K, mode, y, st == 1);
              ref.block_dequantize(words.data(), sc.data(), rows, K, mode, ry.data(), false);
              for (size_t i = 0; i < ry.size(); ++i)
                if (!same_float(y[i], ry[i]) || y[ry.size()] != 77.0f) {
                  ctx.fail(std::string(k->isa) + " block_dequantize " + name + " at " + std::to_string(i));
                  break;
                }
            }
        }
}

// The AVX-512 NVFP4 elements divide by the group's E4M3 scale d through a
// reciprocal and one FMA residual step (cpu/float_grid_simd.cpp,
// nv_quotient16). It must equal the true division bit for bit. The quotient's
// significand depends only on the significands of v and d (a power-of-two
// scaling of either scales every step exactly, away from float32's subnormal
// and overflow ranges), and an E4M3 value has one of eight significands, so
// every v in [1, 2) against each of them is the whole claim: 8 x 2^23 cases.
// A few other binades of d and v, and signed zeros, for good measure.
void test_nv_quotient(Context& ctx) {
  if (!(cpu::fgrid::avx512() && kernels::isa_supported("avx512"))) {
    std::printf("  (no AVX-512 on this CPU: nothing to check)\n");
    return;
  }
  constexpr size_t kChunk = size_t{1} << 16;
  std::vector<float> v(kChunk), q(kChunk);
  for (int m = 8; m < 16; ++m)
    for (int e : {0, -9, -3, 5, 8}) {
      const float d = std::ldexp(static_cast<float>(m) / 8.0f, e);
      for (int ve : {0, 3, -7}) {
        if (ve != 0 && e != 0) continue;  // the other binades of v against the unscaled d only
        for (uint32_t base = 0; base < (1u << 23); base += kChunk) {
          if (ve != 0 && base % (kChunk * 16) != 0) continue;  // a sample of them
          for (size_t i = 0; i < kChunk; ++i)
            v[i] = fbits(((127u + static_cast<uint32_t>(ve)) << 23) | (base + static_cast<uint32_t>(i))) *
                   (i % 2 ? -1.0f : 1.0f);
          cpu::fgrid::nv_quotient_avx512(kChunk, v.data(), d, q.data());
          for (size_t i = 0; i < kChunk; ++i)
            if (!same_float(q[i], v[i] / d)) {
              ctx.fail("nvfp4 quotient " + std::to_string(v[i]) + " / " + std::to_string(d));
              return;
            }
        }
      }
    }
  const float z[3] = {0.0f, -0.0f, 1.0f};
  float qz[3];
  cpu::fgrid::nv_quotient_avx512(3, z, 0.375f, qz);
  for (int i = 0; i < 3; ++i)
    if (!same_float(qz[i], z[i] / 0.375f)) ctx.fail("nvfp4 quotient of a signed zero or a tail");
}

void test_affine(Context& ctx) {
  const Kernels& ref = cpu::fgrid::scalar();
  for (const Kernels* k : tables())
    for (int bits : {2, 3, 4, 5, 6, 8})
      for (int G : {32, 64, 128}) {
        const int64_t groups = 37;
        std::vector<float> w = block_rows(ctx.rng, groups, G);
        // A few groups of the edge cases the affine parameters decide on.
        for (int i = 0; i < G; ++i) w[i] = 0.0f, w[G + i] = -0.0f, w[2 * G + i] = 1.5f;
        w[3 * G] = NAN;
        for (int i = 0; i < G; ++i) w[4 * G + i] = NAN;
        const size_t nw = static_cast<size_t>(groups * G * bits / 32);
        std::vector<uint32_t> words(nw + 1, 0xdeadbeef), rw(nw);
        std::vector<float> sc(groups), bi(groups), rsc(groups), rbi(groups);
        const bool fin = k->affine_quantize(w.data(), groups, G, bits, words.data(), sc.data(), bi.data());
        ref.affine_quantize(w.data(), groups, G, bits, rw.data(), rsc.data(), rbi.data());
        bool ok = std::memcmp(words.data(), rw.data(), nw * 4) == 0 && words[nw] == 0xdeadbeef && !fin;
        // The finiteness report: true on finite groups, false for a single inf anywhere.
        std::vector<float> f(w.begin() + 5 * G, w.end());
        for (float& v : f) v = std::isfinite(v) ? v : 1.0f;
        ok = ok && k->affine_quantize(f.data(), groups - 5, G, bits, rw.data(), rsc.data(), rbi.data());
        f[f.size() - 3] = -INFINITY;
        ok = ok && !k->affine_quantize(f.data(), groups - 5, G, bits, rw.data(), rsc.data(), rbi.data());
        ref.affine_quantize(w.data(), groups, G, bits, rw.data(), rsc.data(), rbi.data());
        for (int64_t i = 0; i < groups; ++i) ok = ok && same_float(sc[i], rsc[i]) && same_float(bi[i], rbi[i]);
        if (!ok) {
          ctx.fail(std::string(k->isa) + " affine_quantize bits " + std::to_string(bits) + " G " + std::to_string(G));
          continue;
        }
        for (int st = 0; st < 2; ++st) {
          std::vector<float> y(static_cast<size_t>(groups * G) + 8, 77.0f), ry(static_cast<size_t>(groups * G));
          k->affine_dequantize(words.data(), sc.data(), bi.data(), groups, G, bits, y.data(), st == 1);
          ref.affine_dequantize(words.data(), sc.data(), bi.data(), groups, G, bits, ry.data(), false);
          for (size_t i = 0; i < ry.size(); ++i)
            if (!same_float(y[i], ry[i]) || y[ry.size()] != 77.0f) {
              ctx.fail(std::string(k->isa) + " affine_dequantize bits " + std::to_string(bits) + " at " +
                       std::to_string(i));
              break;
            }
        }
      }
}

// The affine codes are rint((w - bias) / scale): groups built so that the
// quotient falls on and within a few ulps of the grid's half-integers (exact
// ties with a power-of-two step), for several steps. Every table must give the
// scalar codes there, where a division replaced by a reciprocal multiply
// would differ (a mutation check: it fails this case).
void test_affine_half_integers(Context& ctx) {
  const Kernels& ref = cpu::fgrid::scalar();
  std::uniform_real_distribution<float> unit(0.001f, 3.0f);
  for (const Kernels* k : tables())
    for (int bits : {4, 8}) {
      const int G = 64, n_bins = (1 << bits) - 1;
      const int64_t groups = 64;
      std::vector<float> w(static_cast<size_t>(groups * G));
      for (int64_t gi = 0; gi < groups; ++gi) {
        float* g = w.data() + gi * G;
        const float c = gi % 4 == 0 ? 1.0f : unit(ctx.rng);  // the grid step (a power of two: exact quotients)
        g[0] = 0.0f;                                           // the range [0, n_bins * c]
        g[1] = static_cast<float>(n_bins) * c;
        for (int i = 2; i < G; ++i) {
          float v = (static_cast<float>(ctx.rng() % static_cast<uint64_t>(n_bins)) + 0.5f) * c;
          for (int step = static_cast<int>(ctx.rng() % 7) - 3; step != 0; step += step > 0 ? -1 : 1)
            v = std::nextafter(v, step > 0 ? INFINITY : -INFINITY);
          g[i] = v;
        }
      }
      const size_t nw = static_cast<size_t>(groups * G * bits / 32);
      std::vector<uint32_t> words(nw), rw(nw);
      std::vector<float> sc(groups), bi(groups), rsc(groups), rbi(groups);
      k->affine_quantize(w.data(), groups, G, bits, words.data(), sc.data(), bi.data());
      ref.affine_quantize(w.data(), groups, G, bits, rw.data(), rsc.data(), rbi.data());
      if (std::memcmp(words.data(), rw.data(), nw * 4) != 0)
        ctx.fail(std::string(k->isa) + " affine codes near half-integers, bits " + std::to_string(bits));
    }
}

void bench(Context& ctx) {
  const size_t n = ctx.quick ? (size_t{1} << 20) : (size_t{1} << 22);
  // Weights and activations as models have them (no subnormals: those take
  // microcode assists in the float units and would time the assist, not the kernel).
  std::vector<float> x(n), y(n);
  std::normal_distribution<float> nd(0.0f, 40.0f);
  for (float& v : x) v = nd(ctx.rng);
  std::vector<uint8_t> q(n);
  std::vector<uint32_t> words(n / 4 + 1);
  std::vector<uint8_t> sc(n / 16);
  std::vector<float> fs(n / 32), fb(n / 32);
  const float s = 0.5f;
  const Encoding e = cpu::fgrid::grid_encoding(minifloat::kE4M3FN, true);
  for (const Kernels* k : tables()) {
    auto gbs = [&](double bytes, const std::function<void()>& fn) { return bytes / time_per_call(fn) / 1e9; };
    std::printf("  %-7s encode e4m3 %6.2f GB/s  decode e4m3 %6.2f GB/s  mxfp8 %6.2f GB/s  mxfp4 %6.2f GB/s  "
                "nvfp4 %6.2f GB/s  affine b4 g64 %6.2f GB/s\n",
                k->isa, gbs(5.0 * n, [&] { k->encode(n, x.data(), q.data(), &s, false, e); }),
                gbs(5.0 * n, [&] { k->decode(n, q.data(), y.data(), &s, false, minifloat::kE4M3FN, false); }),
                gbs(5.0 * n, [&] { k->block_quantize(x.data(), static_cast<int64_t>(n / 4096), 4096, BlockMode::Mxfp8, reinterpret_cast<uint32_t*>(q.data()), sc.data()); }),
                gbs(4.5 * n, [&] { k->block_quantize(x.data(), static_cast<int64_t>(n / 4096), 4096, BlockMode::Mxfp4, words.data(), sc.data()); }),
                gbs(4.5 * n, [&] { k->block_quantize(x.data(), static_cast<int64_t>(n / 4096), 4096, BlockMode::Nvfp4, words.data(), sc.data()); }),
                gbs(4.5 * n, [&] { k->affine_quantize(x.data(), static_cast<int64_t>(n / 64), 64, 4, words.data(), fs.data(), fb.data()); }));
  }
}

Register r1("float-grid", "encode every tail / special value, each table", Kind::Test, test_encode);
Register r2("float-grid", "encode float32 patterns (all 2^32 with LUCID_EXHAUSTIVE=1)", Kind::Test,
            test_encode_patterns);
Register r3("float-grid", "decode every code, tail, stream", Kind::Test, test_decode);
Register r7("float-grid", "fake_quantize every tail / special value", Kind::Test, test_fake);
Register r4("float-grid", "mxfp8 / mxfp4 / nvfp4 blocks", Kind::Test, test_blocks);
Register r5("float-grid", "affine groups, bits 2-8", Kind::Test, test_affine);
Register r9("float-grid", "affine rounding near half-integers", Kind::Test, test_affine_half_integers);
Register r8("float-grid", "nvfp4 quotient: every v significand by every E4M3 significand", Kind::Test,
            test_nv_quotient);
Register r6("float-grid", "bandwidth", Kind::Bench, bench);

}  // namespace
}  // namespace lucid::kernel_tests
