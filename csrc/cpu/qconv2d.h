// CPU stream of the qconv2d family (ops/qconv2d.h).
#pragma once
#include <cstdint>
#include <memory>

#include "core/tensor.h"
#include "core/window2d.h"
#include "cpu/quantize.h"

namespace lucid::cpu {

// Integer 2-D convolution through the same GEMM: per image and group, an
// integer im2col of x (N, C, H, W) whose padding holds zx, the product with
// w (O, C / groups, kh, kw) and the epilogue above; out (N, O, oh, ow).
// When `cache` is given, w's reordered and packed panels come from it (built on
// the first call per GEMM kernel and group count) instead of being packed for
// this call; w must then be the frozen weight the cache was made for.
struct QConvWeightCache;
std::shared_ptr<QConvWeightCache> make_qconv_weight_cache();
void qconv2d(const Tensor& x, int32_t zx, const Tensor& w, const int32_t* zw, const int32_t* bias,
             const float* scale, int32_t zy, QBounds b, const Window2d& win, int64_t groups, const Tensor& out,
             QConvWeightCache* cache = nullptr);

}  // namespace lucid::cpu
