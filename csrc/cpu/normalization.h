// CPU-stream kernels of the normalization family: softmax and layer_norm in
// one fused pass per row, for float32 contiguous rows (ops/normalization.cpp
// chooses them, and composes the ops otherwise).
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace lucid::cpu {

// softmax (log: log_softmax) of each row of a contiguous float32 x along its
// last axis, into out (contiguous, x's shape): per row the composed form's
// operations element for element — the row's max as amax takes it, x - max,
// exp (fast::exp_f32, the exp kernel's), the sum of those in reduce's order,
// then / sum (log: - log(sum), fast::log_f32) — so the bits are those of
// amax, sub, exp, sum, div run one after the other, in one pass per row.
// Only for rows of 1 .. softmax_row_limit() elements (a longer row's sum
// folds task partials: the caller composes the ops instead).
int64_t softmax_row_limit();
void softmax_rows(const Tensor& x, const Tensor& out, bool log);
// layer_norm over the last `row` elements of a contiguous float32 x, the same
// way: per row mean = sum / n, centred = x - mean, var = sum(centred^2) / n,
// rstd = 1 / sqrt(var + eps), xhat = centred * rstd, y = xhat * w + b (each
// optional, contiguous, `row` elements) — the composed ops' bits. xhat may be
// null (no w and b: y is xhat); rstd gets one value per row. Rows of 1 ..
// softmax_row_limit() elements.
void layer_norm_rows(const Tensor& x, int64_t row, const float* w, const float* b, float eps, const Tensor& y,
                     const Tensor* xhat, const Tensor& rstd);

}  // namespace lucid::cpu
