// int4_weight_only_linear: y = x @ W.T + bias with W held as packed int4
// codes (pack_int4 along K) and per-group scales / zero points along K
// (docs/numerics.md, "int4 weight-only linear"). Float output: the streams
// agree within the documented tolerance, not bit for bit.
#pragma once
#include <string>

#include "core/tensor.h"

namespace lucid::ops {

// x: (..., K) float32; w_packed: (N, K/2) uint8; scale: (N, K/group_size)
// float; zero_point: undefined (0) or (N, K/group_size) integers in the
// grid; qdtype: "qint4" or "quint4"; bias: undefined or (N,) float.
// `reference` runs the scalar CPU kernel.
Tensor int4_weight_only_linear(const Tensor& x, const Tensor& w_packed, const Tensor& scale,
                               const Tensor& zero_point, int64_t group_size, const std::string& qdtype,
                               const Tensor& bias, bool reference = false);

}  // namespace lucid::ops
