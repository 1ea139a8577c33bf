// Integer matrix product with exact int32 accumulation and requantization
// (docs/numerics.md), on the int8 GEMM microkernels of cpu/kernels: the
// weights are packed for the selected engine's kernel, then one threaded
// pass computes the raw products, the zero-point correction, the bias and the
// output formula. The ops layer limits K so no partial sum can overflow.
#include <mutex>
#include <vector>

#include "core/errors.h"
#include "cpu/qgemm.h"
#include "cpu/qmatmul.h"

namespace lucid::cpu {

// Packed panels of one frozen weight, one per kernel layout used so far.
struct QWeightCache {
  std::mutex mutex;
  std::vector<std::shared_ptr<const kernels::QPackedWeights>> packed;

  std::shared_ptr<const kernels::QPackedWeights> get(const kernels::QGemmKernel& kern, const Tensor& w) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& p : packed)
      if (p->kernel == &kern) return p;
    int64_t N = w.size(0), K = w.size(1);
    packed.push_back(std::make_shared<const kernels::QPackedWeights>(
        kernels::qgemm_pack_weights(kern, w.data<int8_t>(), N, K, K)));
    return packed.back();
  }
};

std::shared_ptr<QWeightCache> make_qweight_cache() { return std::make_shared<QWeightCache>(); }

void qmatmul(const Tensor& x, int32_t zx, const Tensor& w, const int32_t* zw, const int32_t* bias,
             const float* scale, int32_t zy, QBounds b, const Tensor& out, QWeightCache* cache) {
  int64_t K = x.shape().back(), N = w.size(0);
  int64_t M = 1;  // rows of the flattened (M, K) activation, also when K = 0
  for (int i = 0; i + 1 < x.ndim(); ++i) M *= x.size(i);
  bool x_signed = x.dtype() == DType::Int8;
  const kernels::QGemmKernel& kern =
      kernels::qgemm_select(M, kernels::qgemm_a7_matters(M) && kernels::activations_below_128(x.raw_data(), x_signed, M * K));
  std::shared_ptr<const kernels::QPackedWeights> packed =
      cache ? cache->get(kern, w)
            : std::make_shared<const kernels::QPackedWeights>(kernels::qgemm_pack_weights(kern, w.data<int8_t>(), N, K, K));
  kernels::QGemmParams p;
  p.x = x.raw_data();
  p.x_signed = x.dtype() == DType::Int8;
  p.m = M, p.ldx = K, p.zx = zx, p.zw = zw, p.bias = bias, p.scale = scale;
  p.zy = static_cast<float>(zy), p.lo = b.lo, p.hi = b.hi;
  p.out = out.raw_data(), p.ldo = N;
  switch (out.dtype()) {
    case DType::Float32: p.out_kind = kernels::QOut::Float; break;
    case DType::Int8: p.out_kind = kernels::QOut::Int8; break;
    case DType::UInt8: p.out_kind = kernels::QOut::UInt8; break;
    case DType::Int32: p.out_kind = kernels::QOut::Requant32; break;
    default: throw TypeError("internal: qmatmul output storage");
  }
  kernels::qgemm(*packed, p);
}

}  // namespace lucid::cpu
