// The normalization family: softmax / log_softmax and layer_norm's forward,
// validated entry points. The autograd layer (autograd/normalization.cpp)
// records their nodes.
#pragma once
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace lucid::ops {

// layer_norm's result y, and xhat and rstd, which its gradient reads.
struct LayerNormParts {
  Tensor y, xhat, rstd;
};

// y = (x - mean) * rsqrt(var + eps) * weight + bias over the trailing axes
// `dims` (biased variance), with xhat = (x - mean) * rsqrt(var + eps) and
// rstd = rsqrt(var + eps) (keepdim shape) kept for the gradient. `eps` is the
// 0-d tensor `var + eps` adds (the caller coerces the Python number). The
// composed ops mean, sub, mul, mean, add, rsqrt, mul (then * weight, + bias)
// in that order; on the CPU stream, float32 throughout with contiguous
// operands and rows of at most 65,536 elements, one fused pass per row
// (cpu::layer_norm_rows) with the same bits.
LayerNormParts layer_norm(const Tensor& x, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                          const std::vector<int64_t>& dims, const Tensor& eps);

// softmax (log: log_softmax) along `axis`: exp(x - max) / sum(exp(x - max)),
// log: (x - max) - log(sum(exp(x - max))), the max a constant shift. The
// composed ops amax, sub, exp, sum, div (log: sum, log, sub) in that order;
// on the CPU stream a contiguous float32 tensor reduced along its last axis
// takes one fused pass per row with the same bits (cpu::softmax_rows). An
// empty axis gives the empty result. Floating x (the caller's check).
Tensor softmax(const Tensor& x, int64_t axis, bool log);

}  // namespace lucid::ops
