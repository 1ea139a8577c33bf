#include "ops/qmatmul.h"

#include <string>

#include "core/errors.h"
#include "cpu/qmatmul.h"
#include "gpu/qmatmul.h"
#include "ops/copy.h"
#include "ops/nn_common.h"
#include "ops/qparams.h"

namespace lucid::ops {

using namespace quant_detail;

Tensor qmatmul(const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq, const Tensor& w_scale,
               const Tensor& w_zp, const Tensor& bias, const Tensor& out_scale, const Tensor& out_zp,
               const std::string& out_qdtype, cpu::QWeightCache* packed) {
  const char* fn = "qmatmul";
  common_device(fn, {&xq, &x_scale, &x_zp, &wq, &w_scale, &w_zp});
  common_params_device(fn, xq, bias, out_scale, out_zp);
  check_codes(fn, xq, wq);
  if (!(xq.ndim() >= 1)) throw ValueError(arg(fn, "xq") + " must have shape (..., K), got a 0-d tensor");
  if (!(wq.ndim() == 2))
    throw ValueError(arg(fn, "wq") + " must have shape (N, K) like a Linear weight, got " + shape_str(wq.shape()));
  int64_t K = xq.shape().back(), N = wq.size(0);
  if (!(wq.size(1) == K))
    throw ValueError(std::string(fn) + "(): shapes do not match: 'xq' " + shape_str(xq.shape()) +
                             " has K = " + std::to_string(K) + " but 'wq' " + shape_str(wq.shape()) +
                             " has K = " + std::to_string(wq.size(1)) + "; expected wq of shape (N, " +
                             std::to_string(K) + ")");
  check_k(fn, K);
  QProduct q = product_params(fn, xq, x_scale, x_zp, N, w_scale, w_zp, bias, out_scale, out_zp, out_qdtype);
  Shape out_shape = xq.shape();
  out_shape.back() = N;
  if (xq.device() == Device::GPU) {
    Tensor acc = gpu::qmatmul_accumulate(xq, q.zx, wq, gpu_tensor(q.zw, DType::Int32),
                                         q.bias() ? gpu_tensor(q.bias_q, DType::Int32) : Tensor());
    if (!q.quantized_out) return gpu::qmatmul_to_float(acc, gpu_tensor(q.sxw, DType::Float32));
    return gpu::qmatmul_requantize(acc, gpu_tensor(q.mult, DType::Float32), q.zy, q.ob.lo, q.ob.hi, q.og.storage);
  }
  Tensor xc = contiguous(xq), wc = contiguous(wq);
  Tensor out = Tensor::empty_cpu(out_shape, q.out_dtype());
  cpu::qmatmul(xc, q.zx, wc, q.zw.data(), q.bias(), q.scale(), q.zy, q.ob, out, packed);
  return out;
}

QPackedWeight qmatmul_prepack(const Tensor& wq, bool copy) {
  const char* fn = "prepack_weight";
  if (!(wq.dtype() == DType::Int8))
    throw TypeError(arg(fn, "wq") + " must hold int8 (qint8) codes, got " + dtype_name(wq.dtype()));
  if (!(wq.ndim() == 2))
    throw ValueError(arg(fn, "wq") + " must have shape (N, K) like a Linear weight, got " + shape_str(wq.shape()));
  check_k(fn, wq.size(1));
  if (wq.device() == Device::GPU) return {wq, nullptr};  // MLX arrays are values: nothing can change them
  return {copy ? clone(wq) : contiguous(wq), cpu::make_qweight_cache()};
}

}  // namespace lucid::ops
