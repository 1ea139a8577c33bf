// f32-qfw-gemv (float-coded weights: fp8 with row scales, mxfp8, mxfp4,
// nvfp4; MLX's affine 4- and 8-bit groups): the scalar reference against a
// float64 product of the decoded weights (within float32 summation error),
// then every vector kernel the host runs against the scalar reference bit for
// bit (NaN equal to NaN), on random codes and scales, every fp8 K tail (K % 32
// from 1 to 31), 1 to 37 rows, 1 to 5 activation rows, every affine group
// size, NaN element codes and NaN scales.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/minifloat.h"
#include "cpu/kernels/qfw-gemv.h"
#include "cpu/kernels/vquant.h"
#include "harness.h"

namespace lucid::kernel_tests {

namespace {

using kernels::QfwFormat;

struct Variant {
  const char* name;
  kernels::qfw_gemv_fn fn;
  bool supported;
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
#if defined(LUCID_QFW_X86) && defined(__GNUC__)
  v.push_back({"f32-qfw-gemv-avx2", &kernels::f32_qfw_gemv_avx2,
               kernels::isa_supported("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")});
  v.push_back({"f32-qfw-gemv-avx512", &kernels::f32_qfw_gemv_avx512, kernels::isa_supported("avx512")});
#endif
  return v;
}

const char* format_name(QfwFormat f) {
  static const char* names[] = {"e4m3-row", "e5m2-row", "mxfp8", "mxfp4", "nvfp4", "affine4", "affine8"};
  return names[static_cast<int>(f)];
}

struct Problem {
  QfwFormat f;
  size_t K, rows, s_stride, G, M;
  std::vector<float> x, xp, s, gb, bias;
  std::vector<uint8_t> w, sc;
};

constexpr int kFormats = 7;

Problem make(Context& ctx, QfwFormat f, size_t K, size_t rows, bool nan_codes, bool with_bias, size_t G = 0,
             size_t M = 1) {
  Problem p{f, K, rows, 1, G, M, {}, {}, {}, {}, {}, {}, {}};
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), sd(1e-3f, 2e-2f);
  std::uniform_int_distribution<int> byte(0, 255), e8(118, 131), e4(0x20, 0x5f);
  p.x.resize(M * K);
  for (auto& v : p.x) v = u(ctx.rng);
  const size_t xl = kernels::qfw_xp_len(f, K, G);
  p.xp.resize(M * xl);
  for (size_t m = 0; m < M; ++m) kernels::qfw_prepare_x(f, K, G, p.x.data() + m * K, p.xp.data() + m * xl);
  p.w.resize(rows * kernels::qfw_row_bytes(f, K));
  for (auto& b : p.w) {
    b = static_cast<uint8_t>(byte(ctx.rng));
    if (!nan_codes && !kernels::qfw_nibbles(f) && !kernels::qfw_affine(f)) {
      const unsigned mag = b & 0x7fu;
      if (f == QfwFormat::E5M2Row ? mag >= 0x7cu : mag == 0x7fu) b &= 0xf0u;
    }
  }
  if (kernels::qfw_affine(f)) {  // MLX's scales and biases: any floats (a NaN scale when asked)
    p.s_stride = K / G;
    p.s.resize(rows * p.s_stride);
    p.gb.resize(rows * p.s_stride);
    for (auto& v : p.s) v = sd(ctx.rng);
    for (auto& v : p.gb) v = 0.1f * u(ctx.rng);
    if (nan_codes) p.s[p.s.size() / 2] = std::nanf("");
  } else if (kernels::qfw_row_scale(f)) {
    p.s.resize(rows);
    for (auto& v : p.s) v = sd(ctx.rng);
  } else {
    p.sc.resize(rows * (K / kernels::qfw_group(f)));
    for (auto& c : p.sc) c = static_cast<uint8_t>(f == QfwFormat::Nvfp4 ? e4(ctx.rng) : e8(ctx.rng));
    if (nan_codes && !p.sc.empty()) p.sc[p.sc.size() / 2] = f == QfwFormat::Nvfp4 ? 0x7f : 0xff;
  }
  if (with_bias) {
    p.bias.resize(rows);
    for (auto& v : p.bias) v = u(ctx.rng);
  }
  return p;
}

// y: M x rows (row m of the activations at m * rows).
void call(const Problem& p, kernels::qfw_gemv_fn fn, std::vector<float>& y) {
  fn(p.f, p.K, p.rows, p.xp.data(), p.w.data(), p.s.empty() ? nullptr : p.s.data(), p.s_stride,
     p.sc.empty() ? nullptr : p.sc.data(), p.G, p.gb.empty() ? nullptr : p.gb.data(),
     p.bias.empty() ? nullptr : p.bias.data(), y.data(), p.M, p.rows);
}

std::vector<float> run(const Problem& p, kernels::qfw_gemv_fn fn) {
  std::vector<float> y(p.M * p.rows);
  call(p, fn, y);
  return y;
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(a[i]) && std::isnan(b[i])) && std::memcmp(&a[i], &b[i], 4) != 0) return false;
  return true;
}

// The value of weight (n, k) from the codes, by minifloat.h's decode.
double weight(const Problem& p, size_t n, size_t k) {
  namespace mf = minifloat;
  const size_t rb = kernels::qfw_row_bytes(p.f, p.K);
  if (kernels::qfw_affine(p.f)) {  // scale * q + bias, q the code (nibble or byte)
    const size_t g = n * p.s_stride + k / p.G;
    const unsigned q = p.f == QfwFormat::Affine8 ? p.w[n * rb + k] : (p.w[n * rb + k / 2] >> (4 * (k & 1))) & 15u;
    return double(p.s[g]) * q + p.gb[g];
  }
  if (kernels::qfw_row_scale(p.f))
    return double(mf::decode(p.w[n * rb + k], p.f == QfwFormat::E5M2Row ? mf::kE5M2 : mf::kE4M3FN)) * p.s[n];
  const size_t G = kernels::qfw_group(p.f), g = p.sc[n * (p.K / G) + k / G];
  double v;
  if (p.f == QfwFormat::Mxfp8) v = mf::decode(p.w[n * rb + k], mf::kE4M3FN);
  else v = mf::decode((p.w[n * rb + k / 2] >> (4 * (k & 1))) & 15u, mf::kE2M1FN);
  return v * (p.f == QfwFormat::Nvfp4 ? double(mf::decode(g, mf::kE4M3FN)) : double(mf::e8m0_value(g)));
}

bool near_direct(const Problem& p, const std::vector<float>& y) {
  for (size_t m = 0; m < p.M; ++m)
    for (size_t n = 0; n < p.rows; ++n) {
      double ref = 0, mag = 0;
      for (size_t k = 0; k < p.K; ++k) {
        const double w = weight(p, n, k), x = p.x[m * p.K + k];
        ref += x * w;
        // affine: the bias term's own rounding is relative to sum |x| |bias|
        mag += std::fabs(x * w) + (kernels::qfw_affine(p.f) ? std::fabs(x * p.gb[n * p.s_stride + k / p.G]) : 0.0);
      }
      if (!p.bias.empty()) ref += p.bias[n], mag += std::fabs(p.bias[n]);
      const float got = y[m * p.rows + n];
      if (std::isnan(ref) != std::isnan(got)) return false;
      if (!std::isnan(ref) && std::fabs(got - ref) > 1e-5 * mag + 1e-30) return false;
    }
  return true;
}

template <class F>
void for_each_problem(Context& ctx, F&& fn) {
  for (int fi = 0; fi < kFormats; ++fi) {
    const QfwFormat f = static_cast<QfwFormat>(fi);
    if (kernels::qfw_affine(f)) {  // every group size, groups from 1 to past 16 (the bias term's tail)
      for (size_t G : {size_t{32}, size_t{64}, size_t{128}})
        for (size_t K : {G, 3 * G, 17 * G, size_t{4096}})
          for (size_t rows : {size_t{1}, size_t{5}, size_t{37}})
            for (size_t M : {size_t{1}, size_t{3}, size_t{5}})
              for (bool nan : {false, true})
                if (K * rows * M <= size_t{1} << 20) fn(make(ctx, f, K, rows, nan, rows != 5, G, M));
      continue;
    }
    std::vector<size_t> Ks = {32, 64, 96, 160, 1024};
    if (kernels::qfw_row_scale(f))
      for (size_t t = 1; t < 32; ++t) Ks.push_back(64 + t);
    for (size_t K : Ks)
      for (size_t rows : {size_t{1}, size_t{5}, size_t{37}})
        for (bool nan : {false, true}) fn(make(ctx, f, K, rows, nan, rows != 5, 0, rows == 5 ? 3 : 1));
  }
}

std::string describe(const Problem& p) {
  return std::string(format_name(p.f)) + " K=" + std::to_string(p.K) + " rows=" + std::to_string(p.rows) +
         " G=" + std::to_string(p.G) + " M=" + std::to_string(p.M);
}

const Register scalar_case("qfw-gemv", "f32-qfw-gemv-scalar", Kind::Test, [](Context& ctx) {
  int n = 0;
  for_each_problem(ctx, [&](const Problem& p) {
    ++n;
    if (!near_direct(p, run(p, &kernels::f32_qfw_gemv_scalar))) ctx.fail("scalar vs float64 product " + describe(p));
  });
  std::printf("    %d problems within float32 summation error of the float64 product\n", n);
});

struct RegisterVariants {
  RegisterVariants() {
    for (const Variant& v : variants()) {
      Register("qfw-gemv", v.name, Kind::Test, [v](Context& ctx) {
        if (!v.supported) return (void)std::printf("    skipped: this CPU lacks the ISA\n");
        int n = 0;
        for_each_problem(ctx, [&](const Problem& p) {
          ++n;
          std::vector<float> y(p.M * p.rows);
          call(p, v.fn, y);
          if (avx_upper_in_use()) ctx.fail(std::string(v.name) + " returned without vzeroupper, " + describe(p));
          if (!same(y, run(p, &kernels::f32_qfw_gemv_scalar))) ctx.fail(std::string(v.name) + " " + describe(p));
        });
        std::printf("    %d problems equal the scalar reference\n", n);
      });
      Register("qfw-gemv", v.name, Kind::Bench, [v](Context& ctx) {
        if (!v.supported) return (void)std::printf("    skipped: this CPU lacks the ISA\n");
        const size_t K = 4096, N = ctx.quick ? 1024 : 4096;
        for (int fi = 0; fi < kFormats; ++fi) {
          const QfwFormat f = static_cast<QfwFormat>(fi);
          const Problem p = make(ctx, f, K, N, false, false, kernels::qfw_affine(f) ? 64 : 0);
          std::vector<float> y(N);
          double t = time_per_call([&] { v.fn(p.f, K, N, p.xp.data(), p.w.data(), p.s.empty() ? nullptr : p.s.data(),
                                              p.s_stride, p.sc.empty() ? nullptr : p.sc.data(), p.G,
                                              p.gb.empty() ? nullptr : p.gb.data(), nullptr, y.data(), 1, N); },
                                   ctx.quick ? 0.1 : 0.25);
          std::printf("    %-22s %-9s N=%zu K=%zu %7.3f ms %7.1f GOP/s %6.2f GB/s of codes\n", v.name,
                      format_name(p.f), N, K, t * 1e3, 2.0 * N * K / t / 1e9, p.w.size() / t / 1e9);
        }
      });
    }
  }
} register_variants;

}  // namespace

}  // namespace lucid::kernel_tests
