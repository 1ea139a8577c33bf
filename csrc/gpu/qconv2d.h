// GPU stream of the qconv2d family (ops/qconv2d.h).
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "core/window2d.h"

namespace lucid::gpu {

// Quantized conv2d as the CPU stream defines it: im2col of x (N, C, H, W)
// padded with zx, then the exact blocked product of qmatmul_accumulate and
// its epilogue (float32 with scale = sxw, or codes with scale = M[n]).
Tensor qconv2d(const Tensor& x, int32_t zx, const Tensor& w, const Tensor& zw, const Tensor& bias, const Tensor& scale,
               bool quantized_out, int32_t zy, float lo, float hi, DType out, const Window2d& win, int64_t groups);

}  // namespace lucid::gpu
