// int8 GEMM kernels: every microkernel the host can run against the scalar
// reference (tiles), and the full qgemm driver of every engine against a
// plain int64 evaluation of docs/numerics.md written here (shapes with M / N
// / K tails, zero points at the grid ends, all-255 x all-(-128), the largest
// K the ops layer admits). Then GOP/s per variant and its fraction of peak.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/thread_pool.h"
#include "cpu/qgemm.h"
#include "harness.h"

namespace lucid::kernel_tests {
namespace {

using kernels::QGemmKernel;
using kernels::QOut;

std::string tag(const QGemmKernel& k) { return k.name; }

// ---- microkernel tiles ------------------------------------------------------

// Raw sum_k a[i][k] * w[j][k] for one full tile, against the packed kernel.
// fill: 0 random; then constant tiles at the extremes: 1 all-amax x all-(-128),
// 2 all-0 x all-127, 3 all-0 x all-(-128), 4 all-amax x all-127 (amax: 127
// for needs_a7 kernels, else 255).
void check_tile(Context& ctx, const QGemmKernel& kern, int rows, int64_t k, int fill) {
  const int64_t nr = kern.nr, mr = kern.mr;
  std::vector<uint8_t> a(static_cast<size_t>(mr * k));
  std::vector<int8_t> w(static_cast<size_t>(nr * k));
  const int amax = kern.needs_a7 ? 127 : 255;  // such kernels take activations below 128 only
  std::uniform_int_distribution<int> u8(0, amax), s8(-128, 127);
  const int a_fill[] = {0, amax, 0, 0, amax}, w_fill[] = {0, -128, 127, -128, 127};
  for (auto& v : a) v = static_cast<uint8_t>(fill == 0 ? u8(ctx.rng) : a_fill[fill]);
  for (auto& v : w) v = static_cast<int8_t>(fill == 0 ? s8(ctx.rng) : w_fill[fill]);
  auto packed = kernels::qgemm_pack_weights(kern, w.data(), nr, k, k);
  const int64_t kp = packed.kp;
  std::vector<uint8_t> p8(static_cast<size_t>(mr * kp), 0);
  std::vector<int16_t> p16(static_cast<size_t>(mr * kp), 0);
  const uint8_t flip = kern.a_minus128 ? 0x80 : 0;  // such panels hold a - 128
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t kk = 0; kk < k; ++kk)
      p8[i * kp + kk] = static_cast<uint8_t>(a[i * k + kk] ^ flip), p16[i * kp + kk] = a[i * k + kk];
  std::vector<int32_t> c(static_cast<size_t>(mr * nr), 0x5a5a5a5a);
  kern.ukernel(rows, static_cast<size_t>(kp), kern.a_int16 ? static_cast<const void*>(p16.data()) : p8.data(),
               static_cast<size_t>(kp), packed.data.data(), c.data());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < nr; ++j) {
      int64_t want = 0;
      for (int64_t kk = 0; kk < k; ++kk) want += (int64_t{a[i * k + kk]} - (flip ? 128 : 0)) * w[j * k + kk];
      if (c[i * nr + j] != want) {
        ctx.fail(tag(kern) + " tile rows=" + std::to_string(rows) + " K=" + std::to_string(k) + " fill=" +
                 std::to_string(fill) + " at (" + std::to_string(i) + "," + std::to_string(j) + "): got " +
                 std::to_string(c[i * nr + j]) + ", want " + std::to_string(want));
        return;
      }
    }
}

// The indirect form: row i's values are nseg segments of seglen codes at
// rows[i] + s * seg_stride, read from one buffer whose rows overlap (as a
// convolution's windows do); against the int64 sum over the same bytes.
void check_indirect(Context& ctx, const QGemmKernel& kern, int rows, int64_t nseg, int64_t seglen, int64_t row_step) {
  const int64_t nr = kern.nr, seg_stride = seglen + 12, k = nseg * seglen;
  const int64_t span = (rows - 1) * row_step + (nseg - 1) * seg_stride + seglen;
  std::vector<uint8_t> buf(static_cast<size_t>(span));
  std::vector<int8_t> w(static_cast<size_t>(nr * k));
  std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127);
  for (auto& v : buf) v = static_cast<uint8_t>(u8(ctx.rng));
  for (auto& v : w) v = static_cast<int8_t>(s8(ctx.rng));
  auto packed = kernels::qgemm_pack_weights(kern, w.data(), nr, k, k);
  std::vector<const uint8_t*> ptrs(static_cast<size_t>(kern.mr), nullptr);  // rows past `rows` must not be read
  for (int i = 0; i < rows; ++i) ptrs[i] = buf.data() + i * row_step;
  std::vector<int32_t> c(static_cast<size_t>(kern.mr * nr), 0x5a5a5a5a);
  kern.iukernel(rows, static_cast<size_t>(nseg), static_cast<size_t>(seglen), static_cast<size_t>(seg_stride),
                ptrs.data(), packed.data.data(), c.data());
  for (int i = 0; i < rows; ++i)
    for (int64_t j = 0; j < nr; ++j) {
      int64_t want = 0;
      for (int64_t sg = 0; sg < nseg; ++sg)
        for (int64_t t = 0; t < seglen; ++t)
          want += int64_t{ptrs[i][sg * seg_stride + t]} * w[j * k + sg * seglen + t];
      if (c[i * nr + j] != want) {
        ctx.fail(tag(kern) + " indirect rows=" + std::to_string(rows) + " nseg=" + std::to_string(nseg) +
                 " seglen=" + std::to_string(seglen) + " at (" + std::to_string(i) + "," + std::to_string(j) +
                 "): got " + std::to_string(c[i * nr + j]) + ", want " + std::to_string(want));
        return;
      }
    }
}

void tiles(Context& ctx, const QGemmKernel& kern) {
  for (int fill = 0; fill < 5; ++fill)
    for (int rows = 1; rows <= kern.mr; ++rows)
      for (int64_t k : {1, 2, 3, 4, 5, 7, 8, 31, 64, 65, 130, 1000}) check_tile(ctx, kern, rows, k, fill);
  if (kern.iukernel)
    for (int rows = 1; rows <= kern.mr; ++rows)
      for (int64_t nseg : {1, 2, 3, 7})
        for (int64_t seglen : {4, 8, 12, 64, 132}) check_indirect(ctx, kern, rows, nseg, seglen, rows % 2 ? 4 : 200);
}

// ---- full product with epilogue --------------------------------------------

struct Problem {
  int64_t m, n, k;
  bool x_signed;
  int32_t zx;
  std::vector<int32_t> zw, bias;
  std::vector<uint8_t> x;  // raw bytes (int8 when x_signed)
  std::vector<int8_t> w;
  std::vector<float> scale;
  QOut out;
  float zy, lo, hi;
};

// docs/numerics.md, evaluated in int64 and then wrapped to int32 as the
// contract's two's-complement bias addition does.
std::vector<int64_t> expected(const Problem& pr) {
  std::vector<int64_t> y(static_cast<size_t>(pr.m * pr.n));
  for (int64_t m = 0; m < pr.m; ++m)
    for (int64_t n = 0; n < pr.n; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < pr.k; ++k) {
        int64_t xv = pr.x_signed ? int64_t{static_cast<int8_t>(pr.x[m * pr.k + k])} : int64_t{pr.x[m * pr.k + k]};
        acc += (xv - pr.zx) * (int64_t{pr.w[n * pr.k + k]} - pr.zw[n]);
      }
      uint32_t wrapped = static_cast<uint32_t>(acc) + (pr.bias.empty() ? 0u : static_cast<uint32_t>(pr.bias[n]));
      int32_t a = static_cast<int32_t>(wrapped);
      int64_t v;
      if (pr.out == QOut::Int32) {
        v = a;
      } else if (pr.out == QOut::Float) {
        float f = static_cast<float>(a) * pr.scale[n];
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        v = bits;
      } else {
        volatile float t = static_cast<float>(a) * pr.scale[n];  // volatile: no contraction, no reordering
        volatile float r = std::nearbyint(t);
        float q = r + pr.zy;
        q = std::min(std::max(q, pr.lo), pr.hi);
        v = static_cast<int64_t>(q);
      }
      y[m * pr.n + n] = v;
    }
  return y;
}

std::vector<int64_t> run(Context& ctx, const QGemmKernel& kern, const Problem& pr) {
  auto packed = kernels::qgemm_pack_weights(kern, pr.w.data(), pr.n, pr.k, pr.k);
  kernels::QGemmParams p;
  p.x = pr.x.data(), p.x_signed = pr.x_signed, p.m = pr.m, p.ldx = pr.k, p.zx = pr.zx;
  p.zw = pr.zw.data(), p.bias = pr.bias.empty() ? nullptr : pr.bias.data();
  p.out_kind = pr.out, p.scale = pr.scale.data(), p.zy = pr.zy, p.lo = pr.lo, p.hi = pr.hi, p.ldo = pr.n;
  size_t cnt = static_cast<size_t>(pr.m * pr.n);
  std::vector<int64_t> y(cnt);
  std::vector<int32_t> o32(cnt);
  std::vector<int8_t> o8(cnt);
  std::vector<uint8_t> ou8(cnt);
  std::vector<float> of(cnt);
  switch (pr.out) {
    case QOut::Int32: case QOut::Requant32: p.out = o32.data(); break;
    case QOut::Float: p.out = of.data(); break;
    case QOut::Int8: p.out = o8.data(); break;
    case QOut::UInt8: p.out = ou8.data(); break;
  }
  kernels::qgemm(packed, p);
  if (avx_upper_in_use()) ctx.fail(tag(kern) + " qgemm returned without vzeroupper");
  for (size_t i = 0; i < cnt; ++i) {
    switch (pr.out) {
      case QOut::Int32: case QOut::Requant32: y[i] = o32[i]; break;
      case QOut::Float: { uint32_t b; std::memcpy(&b, &of[i], 4); y[i] = b; break; }
      case QOut::Int8: y[i] = o8[i]; break;
      case QOut::UInt8: y[i] = ou8[i]; break;
    }
  }
  return y;
}

const char* out_name(QOut o) {
  switch (o) {
    case QOut::Int32: return "int32";
    case QOut::Float: return "float";
    case QOut::Int8: return "qint8";
    case QOut::UInt8: return "quint8";
    case QOut::Requant32: return "qint32";
  }
  return "?";
}

// fill: 0 random, 1 all-255 (x) x all-(-128) (w), 2 all-0 x all-127.
// a7: activations whose kernel view (uint8, int8 with the sign bit flipped)
// stays below 128, for needs_a7 kernels.
Problem make(Context& ctx, int64_t m, int64_t n, int64_t k, bool x_signed, int zx_mode, int zw_mode, int fill,
             QOut out, bool bias, bool a7 = false) {
  Problem pr{m, n, k, x_signed, 0, {}, {}, {}, {}, {}, out, 0, 0, 0};
  std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127), u7(0, 127);
  pr.x.resize(static_cast<size_t>(m * k));
  pr.w.resize(static_cast<size_t>(n * k));
  // Largest code: 255 (uint8) / 127 (int8), or with a7 127 / -1.
  const int top = a7 ? (x_signed ? 0xff : 127) : (x_signed ? 127 : 255);
  for (auto& v : pr.x) {
    int r = a7 ? (x_signed ? 0x80 | u7(ctx.rng) : u7(ctx.rng)) : u8(ctx.rng);
    v = static_cast<uint8_t>(fill == 1 ? top : fill == 2 ? (x_signed ? 0x80 : 0) : r);
  }
  for (auto& v : pr.w) v = static_cast<int8_t>(fill == 1 ? -128 : fill == 2 ? 127 : s8(ctx.rng));
  int xmin = x_signed ? -128 : 0, xmax = x_signed ? 127 : 255;
  pr.zx = zx_mode == 0 ? xmin : zx_mode == 1 ? xmax : (x_signed ? s8(ctx.rng) : u8(ctx.rng));
  for (int64_t j = 0; j < n; ++j) pr.zw.push_back(zw_mode == 0 ? -128 : zw_mode == 1 ? 127 : s8(ctx.rng));
  if (bias) {
    std::uniform_int_distribution<int32_t> b(-(1 << 30), 1 << 30);
    for (int64_t j = 0; j < n; ++j) pr.bias.push_back(b(ctx.rng));
  }
  std::uniform_real_distribution<float> sc(1e-6f, 1e-3f);
  for (int64_t j = 0; j < n; ++j) pr.scale.push_back(sc(ctx.rng));
  switch (out) {
    case QOut::Int8: pr.lo = -128, pr.hi = 127, pr.zy = -3; break;
    case QOut::UInt8: pr.lo = 0, pr.hi = 255, pr.zy = 128; break;
    case QOut::Requant32: pr.lo = -2147483648.0f, pr.hi = 2147483520.0f, pr.zy = 7; break;
    default: break;
  }
  if (out == QOut::Requant32)
    for (auto& s : pr.scale) s *= 1e6f;
  return pr;
}

bool same(Context& ctx, const QGemmKernel& kern, const Problem& pr, const std::string& what) {
  auto got = run(ctx, kern, pr);
  auto want = expected(pr);
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      ctx.fail(tag(kern) + " " + what + " M=" + std::to_string(pr.m) + " N=" + std::to_string(pr.n) + " K=" +
               std::to_string(pr.k) + " out=" + out_name(pr.out) + " at " + std::to_string(i) + ": got " +
               std::to_string(got[i]) + ", want " + std::to_string(want[i]));
      return false;
    }
  return true;
}

void products(Context& ctx, const QGemmKernel& kern) {
  const bool a7 = kern.needs_a7;
  const QOut outs[] = {QOut::Int32, QOut::Float, QOut::Int8, QOut::UInt8, QOut::Requant32};
  int idx = 0;
  for (int64_t m : {1, 2, 5, 7, 16, 17, 33})
    for (int64_t n : {1, 15, 16, 17, 40})
      for (int64_t k : {1, 3, 4, 63, 64, 65, 129}) {
        ++idx;
        bool xs = idx % 2;
        Problem pr = make(ctx, m, n, k, xs, idx % 3, (idx / 3) % 3, idx % 7 == 0 ? 1 : 0, outs[idx % 5], idx % 4 != 0, a7);
        if (!same(ctx, kern, pr, "tails")) return;
      }
  // Extremes: every product at its largest magnitude, zero points at both
  // grid ends, and the largest K with |acc| < 2^31.
  for (bool xs : {false, true})
    for (int zx_mode : {0, 1})
      for (int zw_mode : {0, 1})
        for (int fill : {1, 2}) {
          Problem pr = make(ctx, 3, 19, 301, xs, zx_mode, zw_mode, fill, QOut::Int32, false, a7);
          if (!same(ctx, kern, pr, "grid ends")) return;
        }
  const int64_t kmax = ((int64_t{1} << 31) - 1) / (255 * 255);
  Problem big = make(ctx, 2, 17, kmax, false, 0, 1, 1, QOut::Int32, false, a7);  // (255-0) * (-128-127) * kmax
  same(ctx, kern, big, "K max");
  Problem big_s = make(ctx, 2, 17, kmax, true, 0, 1, 1, QOut::Int32, false, a7);  // (127+128) * (-255) * kmax
  same(ctx, kern, big_s, "K max s8");
  // Threaded: the product cut into row and column parts (a row cut, a column
  // cut when rows are few, a tiny product left on one thread, uneven thread
  // counts) must give the same bits.
  int saved = get_num_threads();
  struct Shape { int64_t m, n, k; };
  for (int threads : {2, 3, 4}) {
    set_num_threads(threads);
    // (Each threaded shape has >= 2 x 2^21 multiply-adds, the driver's least
    // work for a second thread.)
    for (Shape s : {Shape{130, 300, 200}, Shape{64, 256, 256}, Shape{7, 2100, 300}, Shape{515, 70, 129},
                    Shape{1, 4000, 1100}, Shape{3, 20, 5}}) {
      Problem th = make(ctx, s.m, s.n, s.k, threads == 3, 2, 2, 0, threads == 4 ? QOut::Int32 : QOut::UInt8, true, a7);
      if (!same(ctx, kern, th, std::to_string(threads) + " threads")) break;
    }
  }
  set_num_threads(saved);
}

// ---- bench -------------------------------------------------------------------

// Integer ops per cycle per core (one multiply-add = 2 ops) that each
// variant's main instruction can issue, assumed from published tables:
//  scalar  1 imul + 1 add per cycle (2 ops)
//  avx2    2 vpmaddwd per cycle x 16 int16 multiply-adds (Zen3 pipes FP0+FP3,
//          Intel ports 0+5; the vpaddd that follows has spare ALU pipes) = 64;
//          the qu7 kernel's vpmaddubsw + vpmaddwd pair: 32 per 2 = the same 64
//  avxvnni 2 ymm vpdpbusd per cycle x 32 = 128
//  avx512vnni 2 zmm vpdpbusd per cycle x 64 = 256 (Sapphire Rapids ports 0+5)
//  amx     tdpbusd 16x16x64 = 16384 multiply-adds per 16 cycles = 2048
//  neon-dot  4 SDOT per cycle x 16 = 128 (Apple M-series P-cores; 2 on Neoverse = 64)
//  neon-i8mm 4 USMMLA per cycle x 32 = 256 (Apple M2+ P-cores)
double peak_ops_per_cycle(const QGemmKernel& k) {
  std::string e = k.engine;
  if (e == "avx2") return 64;
  if (e == "avxvnni") return 128;
  if (e == "avx512vnni") return 256;
  if (e == "amx") return 2048;
  if (e == "neon-dot") return 128;
  if (e == "neon-i8mm") return 256;
  return 2;
}

void bench(Context& ctx, const QGemmKernel& kern) {
  int saved = get_num_threads();
  set_num_threads(1);
  double ghz = estimate_ghz();
  struct Shape { int64_t m, n, k; };
  std::vector<Shape> shapes = ctx.quick ? std::vector<Shape>{{64, 256, 256}, {1, 1024, 1024}}
                                        : std::vector<Shape>{{256, 256, 256}, {512, 512, 512}, {1, 4096, 4096}};
  bool scalar = std::string(kern.engine) == "reference";
  for (Shape s : shapes) {
    if (scalar) s.m = std::min<int64_t>(s.m, 16);  // keep the scalar run short
    Problem pr = make(ctx, s.m, s.n, s.k, false, 2, 2, 0, QOut::UInt8, true, kern.needs_a7);
    auto packed = kernels::qgemm_pack_weights(kern, pr.w.data(), pr.n, pr.k, pr.k);
    std::vector<uint8_t> out(static_cast<size_t>(s.m * s.n));
    kernels::QGemmParams p;
    p.x = pr.x.data(), p.m = s.m, p.ldx = s.k, p.zx = pr.zx, p.zw = pr.zw.data(), p.bias = pr.bias.data();
    p.out_kind = QOut::UInt8, p.scale = pr.scale.data(), p.zy = pr.zy, p.lo = pr.lo, p.hi = pr.hi;
    p.out = out.data(), p.ldo = s.n;
    double t = time_per_call([&] { kernels::qgemm(packed, p); }, ctx.quick ? 0.1 : 0.25);
    double gops = 2.0 * s.m * s.n * s.k / t / 1e9;
    double peak = peak_ops_per_cycle(kern) * ghz;
    std::printf("    %-34s M=%-5lld N=%-5lld K=%-5lld %8.1f GOP/s  %5.1f%% of %.0f GOP/s peak (%.0f ops/cycle x %.2f GHz)\n",
                kern.name, static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
                gops, 100 * gops / peak, peak, peak_ops_per_cycle(kern), ghz);
  }
  set_num_threads(saved);
}

// Registers one test (tiles + products) and one bench per kernel. A kernel the
// host cannot run says so instead of passing silently.
struct Registrar {
  Registrar() {
    for (const QGemmKernel* k : kernels::qgemm_kernels()) {
      Register(std::string("qgemm"), std::string(k->name), Kind::Test, [k](Context& ctx) {
        if (!k->supported()) {
          std::printf("    skipped: this CPU lacks %s\n", k->engine);
          return;
        }
        tiles(ctx, *k);
        products(ctx, *k);
      });
      Register(std::string("qgemm"), std::string(k->name), Kind::Bench, [k](Context& ctx) {
        if (!k->supported()) {
          std::printf("    skipped: this CPU lacks %s\n", k->engine);
          return;
        }
        bench(ctx, *k);
      });
    }
    // The one-time self-check at engine selection: every family this host
    // runs must pass it (the full tests above hold the same kernels to much
    // more), and the families it reports are exactly the registered ones.
    Register("qgemm", "self-check", Kind::Test, [](Context& ctx) {
      for (const auto& c : kernels::qgemm_self_check()) {
        std::printf("    %-12s %s\n", c.family.c_str(),
                    c.verified ? "verified" : c.supported ? "FAILED" : "unsupported here");
        if (c.supported && !c.verified) ctx.fail("family " + c.family + " failed its self-check");
        bool known = false;
        for (const QGemmKernel* k : kernels::qgemm_kernels()) known |= c.family == k->engine;
        if (!known) ctx.fail("self-check reports an unknown family " + c.family);
      }
    });
    Register("qgemm", "engine selection", Kind::Test, [](Context& ctx) {
      for (const std::string& e : kernels::qgemm_available_engines()) {
        kernels::set_qgemm_engine(e);
        const QGemmKernel& k = kernels::qgemm_select(64);
        if (!k.supported()) ctx.fail("engine " + e + " selected an unsupported kernel " + k.name);
        if (e != "auto" && e != k.engine) ctx.fail("engine " + e + " selected " + k.name);
        if (k.needs_a7) ctx.fail("engine " + e + " chose " + k.name + " without the activation check");
        if (kernels::qgemm_select(64, true).engine != std::string(k.engine))
          ctx.fail("engine " + e + ": the activations-below-128 variant left the family");
      }
      const uint8_t u[] = {0, 127, 5}, u_hi[] = {0, 128, 5};
      const uint8_t s_neg[] = {0x80, 0xff, 0x90}, s_pos[] = {0x80, 0x00, 0x90};  // int8 -128, -1, -112 / 0
      if (!kernels::activations_below_128(u, false, 3) || kernels::activations_below_128(u_hi, false, 3) ||
          !kernels::activations_below_128(s_neg, true, 3) || kernels::activations_below_128(s_pos, true, 3))
        ctx.fail("activations_below_128 misjudged a case");
      for (const QGemmKernel* k : kernels::qgemm_kernels()) {
        if (k->supported()) continue;
        try {
          kernels::set_qgemm_engine(k->engine);
          ctx.fail(std::string("setting unsupported engine ") + k->engine + " did not raise");
        } catch (const std::exception&) {
        }
      }
      try {
        kernels::set_qgemm_engine("no-such-engine");
        ctx.fail("unknown engine name did not raise");
      } catch (const std::exception&) {
      }
      kernels::set_qgemm_engine("auto");
    });
  }
} registrar;

}  // namespace
}  // namespace lucid::kernel_tests
