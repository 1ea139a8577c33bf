// CPU stream of the qmatmul family (ops/qmatmul.h).
#pragma once
#include <cstdint>
#include <memory>

#include "core/tensor.h"
#include "cpu/quantize.h"

namespace lucid::cpu {

// Integer matrix product with the fused epilogue of docs/numerics.md, on the
// int8 GEMM kernels of cpu/kernels (the engine lucid.backends.quantized.engine
// selects): acc[m, n] = sum_k (x[m,k] - zx) * (w[n,k] - zw[n]) + bias[n]
// (exact int32; bias may be null), then out = fl(float(acc) * scale[n]) when
// out is float32, else the requantized codes
// clamp(fl(rint(fl(float(acc) * scale[n])) + zy), lo, hi) in out's integer
// dtype (scale holds the multipliers M[n]). x: (M, K) uint8/int8, w: (N, K)
// int8, out: (M, N), all contiguous.
// When `cache` is given, w's packed panels are taken from it (packed on the
// first call per engine kernel) instead of being packed for this call.
struct QWeightCache;
std::shared_ptr<QWeightCache> make_qweight_cache();
void qmatmul(const Tensor& x, int32_t zx, const Tensor& w, const int32_t* zw, const int32_t* bias,
             const float* scale, int32_t zy, QBounds b, const Tensor& out, QWeightCache* cache = nullptr);

}  // namespace lucid::cpu
