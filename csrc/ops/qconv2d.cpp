#include "ops/qconv2d.h"

#include <string>

#include "core/errors.h"
#include "core/window2d.h"
#include "cpu/qconv2d.h"
#include "gpu/qconv2d.h"
#include "ops/copy.h"
#include "ops/nn_common.h"
#include "ops/qparams.h"

namespace lucid::ops {

using namespace quant_detail;
using nn_detail::ints_str;

Tensor qconv2d(const Tensor& xq, const Tensor& x_scale, const Tensor& x_zp, const Tensor& wq, const Tensor& w_scale,
               const Tensor& w_zp, const Tensor& bias, const std::vector<int64_t>& stride,
               const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups,
               const Tensor& out_scale, const Tensor& out_zp, const std::string& out_qdtype,
               cpu::QConvWeightCache* packed) {
  const char* fn = "qconv2d";
  common_device(fn, {&xq, &x_scale, &x_zp, &wq, &w_scale, &w_zp});
  common_params_device(fn, xq, bias, out_scale, out_zp);
  check_codes(fn, xq, wq);
  if (!(xq.ndim() == 4))
    throw ValueError(arg(fn, "xq") + " must have shape (N, C, H, W), got " + shape_str(xq.shape()));
  if (!(wq.ndim() == 4))
    throw ValueError(arg(fn, "wq") + " must have shape (out_channels, in_channels / groups, kh, kw), got " +
                            shape_str(wq.shape()));
  auto pair = [&](const std::vector<int64_t>& v, const char* name, int64_t lo) {
    if (!(v.size() == 2 && v[0] >= lo && v[1] >= lo))
      throw ValueError(arg(fn, name) + " must be two integers >= " + std::to_string(lo) + ", got " + ints_str(v));
  };
  pair(stride, "stride", 1);
  pair(padding, "padding", 0);
  pair(dilation, "dilation", 1);
  if (!(groups >= 1)) throw ValueError(arg(fn, "groups") + " must be positive, got " + std::to_string(groups));
  const int64_t C = xq.size(1), O = wq.size(0);
  if (!(C % groups == 0 && O % groups == 0 && wq.size(1) * groups == C))
    throw ValueError(std::string(fn) + "(): shapes do not match: 'xq' " + shape_str(xq.shape()) + " and 'wq' " +
            shape_str(wq.shape()) + " with groups = " + std::to_string(groups) +
            "; expected in_channels = wq.shape[1] * groups and out_channels divisible by groups");
  if (!(wq.numel() > 0)) throw ValueError(arg(fn, "wq") + " must not be empty, got shape " + shape_str(wq.shape()));
  Window2d win;
  win.kh = wq.size(2), win.kw = wq.size(3);
  win.sh = stride[0], win.sw = stride[1], win.ph = padding[0], win.pw = padding[1];
  win.dh = dilation[0], win.dw = dilation[1];
  const int64_t span_h = xq.size(2) + 2 * win.ph - win.dh * (win.kh - 1);
  const int64_t span_w = xq.size(3) + 2 * win.pw - win.dw * (win.kw - 1);
  if (!(span_h >= 1 && span_w >= 1))
    throw ValueError(std::string(fn) + "(): input of shape " + shape_str(xq.shape()) +
                                        " (padded by " + ints_str(padding) + ") is smaller than the dilated kernel");
  win.oh = (span_h - 1) / win.sh + 1;
  win.ow = (span_w - 1) / win.sw + 1;
  check_k(fn, wq.size(1) * win.kh * win.kw);
  QProduct q = product_params(fn, xq, x_scale, x_zp, O, w_scale, w_zp, bias, out_scale, out_zp, out_qdtype);
  const Shape out_shape{xq.size(0), O, win.oh, win.ow};
  if (xq.device() == Device::GPU) {
    // An empty batch: MLX cannot reshape empty arrays, and there is nothing to compute.
    if (xq.size(0) == 0) return full(out_shape, 0.0, q.out_dtype(), Device::GPU);
    return gpu::qconv2d(xq, q.zx, wq, gpu_tensor(q.zw, DType::Int32),
                        q.bias() ? gpu_tensor(q.bias_q, DType::Int32) : Tensor(),
                        gpu_tensor(q.quantized_out ? q.mult : q.sxw, DType::Float32), q.quantized_out, q.zy,
                        q.ob.lo, q.ob.hi, q.og.storage, win, groups);
  }
  Tensor xc = contiguous(xq), wc = contiguous(wq);
  Tensor out = Tensor::empty_cpu(out_shape, q.out_dtype());
  cpu::qconv2d(xc, q.zx, wc, q.zw.data(), q.bias(), q.scale(), q.zy, q.ob, win, groups, out, packed);
  return out;
}

QPackedConvWeight qconv2d_prepack(const Tensor& wq, bool copy) {
  const char* fn = "prepack_conv_weight";
  if (!(wq.dtype() == DType::Int8))
    throw TypeError(arg(fn, "wq") + " must hold int8 (qint8) codes, got " + dtype_name(wq.dtype()));
  if (!(wq.ndim() == 4))
    throw ValueError(arg(fn, "wq") + " must have shape (out_channels, in_channels / groups, kh, kw), got " +
                            shape_str(wq.shape()));
  if (!(wq.numel() > 0)) throw ValueError(arg(fn, "wq") + " must not be empty, got shape " + shape_str(wq.shape()));
  check_k(fn, wq.size(1) * wq.size(2) * wq.size(3));
  if (wq.device() == Device::GPU) return {wq, nullptr};  // MLX arrays are values: nothing can change them
  return {copy ? contiguous(clone(wq)) : contiguous(wq), cpu::make_qconv_weight_cache()};
}

}  // namespace lucid::ops
