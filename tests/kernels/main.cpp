// lucid_kernel_tests: runs every registered kernel test (each vector kernel
// the host supports against its scalar reference), then the benchmarks.
// Usage: lucid_kernel_tests [--quick] [--no-bench] [--bench-only] [--filter SUBSTRING]
// Exit status 0 when every test passed.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "core/thread_pool.h"
#include "harness.h"

namespace lucid::kernel_tests {

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

bool Context::fail(const std::string& what) {
  ++failures;
  std::printf("    FAIL %s\n", what.c_str());
  return false;
}

// This thread's CPU time: on a shared, oversubscribed machine wall time
// would count the time slices other processes get (single-threaded benches
// only; the kernels run on the calling thread when the pool has one thread).
double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double time_per_call(const std::function<void()>& fn, double budget) {
  fn();  // warm caches and page in buffers
  double t0 = thread_seconds();
  fn();
  double once = thread_seconds() - t0;
  int calls = std::max(1, static_cast<int>(budget / 3 / std::max(once, 1e-9)));
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    double t = thread_seconds();
    for (int i = 0; i < calls; ++i) fn();
    best = std::min(best, (thread_seconds() - t) / calls);
  }
  return best;
}

double estimate_ghz() {
  static double ghz = [] {
    int64_t n = 100'000'000;
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      int64_t x = 0;
      double t = thread_seconds();
      // Four dependent adds per iteration: the chain, not the loop, sets the pace.
      for (int64_t i = 0; i < n; ++i) {
#if defined(__aarch64__)
        __asm__ volatile("add %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1" : "+r"(x));
#else
        __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
#endif
      }
      best = std::min(best, thread_seconds() - t);
    }
    return 4.0 * n / best / 1e9;
  }();
  return ghz;
}

}  // namespace lucid::kernel_tests

int main(int argc, char** argv) {
  using namespace lucid::kernel_tests;
  Context ctx;
  bool tests = true, bench = true;
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) ctx.quick = true;
    else if (!std::strcmp(argv[i], "--no-bench")) bench = false;
    else if (!std::strcmp(argv[i], "--bench-only")) tests = false;
    else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--no-bench] [--bench-only] [--filter SUBSTRING]\n", argv[0]);
      return 2;
    }
  }
  int run = 0;
  // All tests first, then all benchmarks.
  for (Kind phase : {Kind::Test, Kind::Bench})
    for (const Case& c : registry()) {
      if (c.kind != phase) continue;
      bool is_test = c.kind == Kind::Test;
      if ((is_test && !tests) || (!is_test && !bench)) continue;
      std::string full = c.family + "/" + c.name;
      if (!filter.empty() && full.find(filter) == std::string::npos) continue;
      int before = ctx.failures;
      std::printf("%s %s\n", is_test ? "[test ]" : "[bench]", full.c_str());
      std::fflush(stdout);
      try {
        c.run(ctx);
      } catch (const std::exception& e) {
        ctx.fail(std::string("exception: ") + e.what());
      }
      if (is_test) std::printf("    %s\n", ctx.failures == before ? "ok" : "FAILED");
      ++run;
    }
  std::printf("%d cases run, %d failures\n", run, ctx.failures);
  return ctx.failures == 0 ? 0 : 1;
}
