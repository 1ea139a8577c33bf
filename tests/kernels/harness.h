// The standalone kernel test + bench driver (no Python): each kernel family
// registers its cases from its own file (qgemm.cpp, ...) with a static
// `Register` object; main.cpp runs them. Add a family by adding a file here:
// CMake picks up every tests/kernels/*.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cpu/kernels/test/upper-state.h"

namespace lucid::kernel_tests {

struct Context {
  bool quick = false;          // --quick: smaller bench shapes
  int failures = 0;
  std::mt19937_64 rng{12345};  // fixed seed: failures reproduce
  // Records a failure (printed at once) and returns false, so a case can
  // `return ctx.fail(...)` or keep going.
  bool fail(const std::string& what);
};

enum class Kind { Test, Bench };

struct Case {
  std::string family, name;
  Kind kind;
  std::function<void(Context&)> run;
};

std::vector<Case>& registry();

using kernel_checks::avx_upper_in_use;  // cpu/kernels/test/upper-state.h

struct Register {
  Register(std::string family, std::string name, Kind kind, std::function<void(Context&)> run) {
    registry().push_back({std::move(family), std::move(name), kind, std::move(run)});
  }
};

// Seconds per call of fn, best of a few repetitions of enough calls to last
// about `budget` seconds in total.
double time_per_call(const std::function<void()>& fn, double budget = 0.2);

// Core clock estimate (GHz) from a chain of dependent integer adds (one per
// cycle on every x86-64 and arm64 core). Frequency scaling makes it approximate.
double estimate_ghz();

}  // namespace lucid::kernel_tests
