// GPU-stream elementwise ops over MLX arrays. ops/elementwise.cpp has chosen
// the dtypes already; these functions only express each op in MLX.
#pragma once
#include "core/elementwise_kind.h"
#include "core/tensor.h"

namespace lucid::gpu {

// y = op(x), y has x's dtype. float16/bfloat16 compute in float32 and round
// back, as the CPU stream does.
Tensor unary(UnaryOp op, const Tensor& x);
// bool = op(x) for a floating x.
Tensor predicate(PredicateOp op, const Tensor& x);
// op(a, b) with both cast to out_dtype first.
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, DType out_dtype);
// bool = op(a, b) with both cast to compute_dtype first.
Tensor compare(CompareOp op, const Tensor& a, const Tensor& b, DType compute_dtype);
// cond (bool) ? a : b, with a and b cast to out_dtype.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, DType out_dtype);

}  // namespace lucid::gpu
