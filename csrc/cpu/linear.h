// CPU-stream linear layer, y = x @ w^T + b, as SGEMM over float32 or DGEMM
// over float64 contiguous matrices (ops/linear.cpp flattens the leading axes of x).
#pragma once
#include "core/tensor.h"

namespace lucid::cpu {

// x [M, K], w [O, K], b [O] or undefined -> y [M, O].
void linear(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y);
// gx [M, K] = g @ w; gw [O, K] = g^T @ x; gb [O] = column sums of g. Undefined outputs are skipped.
void linear_backward(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& gx, const Tensor& gw,
                     const Tensor& gb);

}  // namespace lucid::cpu
