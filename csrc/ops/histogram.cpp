#include "ops/histogram.h"

#include <cmath>
#include <string>

#include "core/errors.h"
#include "cpu/histogram.h"
#include "gpu/histogram.h"
#include "ops/copy.h"

namespace lucid::ops {

Tensor histc(const Tensor& x, int64_t bins, double lo, double hi) {
  common_device("histc", {&x});
  check<TypeError>(is_floating(x.dtype()),
                   std::string("histc(): argument 'input' must be a floating-point tensor, got ") + dtype_name(x.dtype()));
  check(bins >= 1 && bins <= (int64_t{1} << 24),
        "histc(): argument 'bins' must be in [1, 2^24], got " + std::to_string(bins));
  const float flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
  // The edges are float32 values (the kernels compute in float32): a double
  // that does not round-trip would silently move them.
  check(std::isfinite(lo) && std::isfinite(hi) && static_cast<double>(flo) == lo && static_cast<double>(fhi) == hi,
        "histc(): arguments 'min' and 'max' must be finite float32 values, got " + std::to_string(lo) + " and " +
            std::to_string(hi));
  check(flo < fhi, "histc(): argument 'min' must be < 'max', got " + std::to_string(lo) + " and " +
                       std::to_string(hi));
  const bool wide = histc_wide_range(bins, flo, fhi);
  if (x.device() == Device::GPU) return gpu::histc(x, bins, flo, fhi, wide);
  return cpu::histc(contiguous(x), bins, flo, fhi, wide);
}

bool histc_wide_range(int64_t bins, float lo, float hi) {
  volatile float den = hi - lo;  // volatile: evaluated in float32, as the kernels do
  volatile float top = den * static_cast<float>(bins);
  return !std::isfinite(top);
}

}  // namespace lucid::ops
