// GPU-stream log1p, expm1, log2, atan2 (MLX). Same contracts as cpu/special.h;
// float16 / bfloat16 compute in float32 and round once, as the CPU stream does.
#pragma once
#include "core/tensor.h"
#include "core/special_kind.h"

namespace lucid::gpu {

Tensor special_unary(SpecialOp op, const Tensor& x);  // x floating
Tensor atan2(const Tensor& y, const Tensor& x, DType dtype);  // broadcasts; result in `dtype`

}  // namespace lucid::gpu
