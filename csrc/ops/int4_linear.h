// int4_weight_only_linear: y = x @ W.T + bias with W held as packed int4
// codes (pack_int4 along K) and per-group scales / zero points along K
// (docs/numerics.md, "int4 weight-only linear"). Float output: with float
// activations the streams agree within the documented tolerance, not bit for
// bit; with act_dtype "qint8" they agree bit for bit.
#pragma once
#include <string>

#include "core/tensor.h"

namespace lucid::ops {

// y = x @ W.T + bias with W held as packed int4 codes and per-group scales.
// x: (..., K) float32; w_packed: (N, K/2) uint8; scale: (N, K/group_size)
// float; zero_point: undefined (0) or (N, K/group_size) integers in the
// grid; qdtype: "qint4" or "quint4"; bias: undefined or (N,) float.
// act_dtype: "" (float activations) or "qint8" (each row of x quantized to
// int8 with its own scale, exact integer group dots; bit-identical streams).
// `reference` runs the scalar CPU kernels.
Tensor int4_weight_only_linear(const Tensor& x, const Tensor& w_packed, const Tensor& scale,
                               const Tensor& zero_point, int64_t group_size, const std::string& qdtype,
                               const Tensor& bias, bool reference = false, const std::string& act_dtype = "");

}  // namespace lucid::ops
