// Scalar element conversion shared by both streams: the one place that
// defines float -> integer and to/from half behaviour (GPU kernels reproduce it).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/dispatch.h"

namespace lucid {

template <class To, class From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<compute_t<From>>(v) != 0;
  } else if constexpr (is_half_v<To>) {
    return To(static_cast<float>(static_cast<compute_t<From>>(v)));
  } else if constexpr (is_half_v<From>) {
    return convert<To, float>(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    // Defined everywhere: NaN -> 0, saturate, then truncate toward zero.
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    double d = static_cast<double>(v);
    if (d != d) return To(0);
    if (d <= lo) return std::numeric_limits<To>::min();
    if (d >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From>) {
    // Two's complement wrap, as numpy does.
    return static_cast<To>(static_cast<std::make_unsigned_t<To>>(static_cast<uint64_t>(static_cast<int64_t>(v))));
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace lucid
