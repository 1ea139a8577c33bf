// Integer matrix product with exact int32 accumulation and requantization
// (docs/numerics.md), on the int8 GEMM microkernels of cpu/kernels: the
// weights are packed for the selected engine's kernel, then one threaded
// pass computes the raw products, the zero-point correction, the bias and the
// output formula. The ops layer limits K so no partial sum can overflow.
#include "core/errors.h"
#include "cpu/kernels/qgemm.h"
#include "cpu/quantization.h"

namespace lucid::cpu {

void qmatmul(const Tensor& x, int32_t zx, const Tensor& w, const int32_t* zw, const int32_t* bias,
             const float* scale, int32_t zy, QBounds b, const Tensor& out) {
  int64_t K = x.shape().back(), N = w.size(0);
  int64_t M = 1;  // rows of the flattened (M, K) activation, also when K = 0
  for (int i = 0; i + 1 < x.ndim(); ++i) M *= x.size(i);
  const kernels::QGemmKernel& kern = kernels::qgemm_select(M);
  kernels::QPackedWeights packed = kernels::qgemm_pack_weights(kern, w.data<int8_t>(), N, K, K);
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
  kernels::qgemm(packed, p);
}

}  // namespace lucid::cpu
