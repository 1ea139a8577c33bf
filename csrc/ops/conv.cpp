#include "ops/conv.h"

#include "core/errors.h"
#include "core/window2d.h"
#include "cpu/conv.h"
#include "gpu/conv.h"
#include "ops/copy.h"
#include "ops/nn_common.h"

namespace lucid::ops {

using namespace nn_detail;

namespace {

// Validates every argument and works out the output size; the one place
// both streams' conv2d errors come from.
Window2d conv_window(const Tensor& x, const Tensor& w, const std::vector<int64_t>& stride,
                     const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups,
                     const std::string& fn) {
  require_floating(x, fn, "input");
  require_floating(w, fn, "weight");
  check(x.ndim() == 4, fn + "(): expected a 4-D input (N, C, H, W), got shape " + shape_str(x.shape()));
  check(w.ndim() == 4, fn + "(): expected a 4-D weight (out_channels, in_channels/groups, kh, kw), got shape " +
                           shape_str(w.shape()));
  check<TypeError>(x.dtype() == w.dtype(), fn + "(): input and weight must have one dtype, got " +
                                               dtype_name(x.dtype()) + " and " + dtype_name(w.dtype()));
  require_ints(stride, 2, fn, "stride");
  require_ints(padding, 4, fn, "padding", true);
  require_ints(dilation, 2, fn, "dilation");
  check(groups >= 1, fn + "(): argument 'groups' must be positive, got " + std::to_string(groups));
  const int64_t c = x.size(1), o = w.size(0);
  check(c % groups == 0, fn + "(): in_channels (" + std::to_string(c) + ") must be divisible by groups (" +
                             std::to_string(groups) + ")");
  check(o % groups == 0, fn + "(): out_channels (" + std::to_string(o) + ") must be divisible by groups (" +
                             std::to_string(groups) + ")");
  check(w.size(1) * groups == c, fn + "(): expected input with " + std::to_string(w.size(1) * groups) +
                                     " channels (weight " + shape_str(w.shape()) + ", groups=" +
                                     std::to_string(groups) + "), got input of shape " + shape_str(x.shape()));
  Window2d win;
  win.kh = w.size(2), win.kw = w.size(3);
  win.sh = stride[0], win.sw = stride[1];
  win.ph = padding[0], win.pw = padding[2];
  win.dh = dilation[0], win.dw = dilation[1];
  check(w.numel() > 0, fn + "(): weight must not be empty, got shape " + shape_str(w.shape()));
  const int64_t span_h = x.size(2) + padding[0] + padding[1] - win.dh * (win.kh - 1);
  const int64_t span_w = x.size(3) + padding[2] + padding[3] - win.dw * (win.kw - 1);
  check(span_h >= 1 && span_w >= 1,
        fn + "(): input of shape " + shape_str(x.shape()) + " (padded by " + ints_str(padding) +
            ") is smaller than the dilated kernel (" + std::to_string(win.dh * (win.kh - 1) + 1) + ", " +
            std::to_string(win.dw * (win.kw - 1) + 1) + ")");
  win.oh = (span_h - 1) / win.sh + 1;
  win.ow = (span_w - 1) / win.sw + 1;
  return win;
}

void check_bias(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& fn) {
  check(b.ndim() == 1 && b.size(0) == w.size(0), fn + "(): expected bias of shape (" + std::to_string(w.size(0)) +
                                                     ",), got " + shape_str(b.shape()));
  check<TypeError>(b.dtype() == x.dtype(), fn + "(): bias must have the input's dtype " + dtype_name(x.dtype()) +
                                               ", got " + dtype_name(b.dtype()));
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
              const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
              const std::vector<int64_t>& dilation, int64_t groups, const std::string& fn) {
  if (bias) common_device(fn.c_str(), {&x, &weight, &*bias});
  else common_device(fn.c_str(), {&x, &weight});
  const Window2d win = conv_window(x, weight, stride, padding, dilation, groups, fn);
  Tensor b = bias ? *bias : Tensor();
  if (bias) check_bias(x, weight, b, fn);
  const Shape y_shape{x.size(0), weight.size(0), win.oh, win.ow};
  if (x.device() == Device::GPU) {
    // An empty batch: MLX cannot reshape empty arrays, and there is nothing to compute.
    if (x.size(0) == 0) return full(y_shape, 0.0, x.dtype(), x.device());
    return gpu::conv2d(x, weight, b, win, groups);
  }
  const DType work = cpu_work_dtype(x.dtype());
  Tensor y = Tensor::empty_cpu(y_shape, work);
  cpu::conv2d(cpu_work(x, work), cpu_work(weight, work), bias ? cpu_work(b, work) : Tensor(), y, win, groups);
  return cpu_cast_back(y, x.dtype());
}

std::tuple<std::optional<Tensor>, std::optional<Tensor>, std::optional<Tensor>> conv2d_backward(
    const Tensor& grad, const Tensor& x, const Tensor& weight, const std::vector<int64_t>& stride,
    const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups,
    const std::vector<bool>& want) {
  const std::string fn = "conv2d_backward";
  common_device(fn.c_str(), {&grad, &x, &weight});
  check(want.size() == 3, fn + "(): 'want' must have 3 flags (input, weight, bias)");
  const Window2d win = conv_window(x, weight, stride, padding, dilation, groups, fn);
  const Shape y_shape{x.size(0), weight.size(0), win.oh, win.ow};
  check(grad.shape() == y_shape, fn + "(): expected grad of shape " + shape_str(y_shape) + ", got " +
                                     shape_str(grad.shape()));
  std::optional<Tensor> gx, gw, gb;
  if (x.device() == Device::GPU && x.size(0) == 0) {  // an empty batch: every gradient is zero
    if (want[0]) gx = full(x.shape(), 0.0, x.dtype(), x.device());
    if (want[1]) gw = full(weight.shape(), 0.0, x.dtype(), x.device());
    if (want[2]) gb = full({weight.size(0)}, 0.0, x.dtype(), x.device());
    return {gx, gw, gb};
  }
  if (x.device() == Device::GPU) {
    auto [a, b, c] = gpu::conv2d_backward(grad.dtype() == x.dtype() ? grad : astype(grad, x.dtype()), x, weight,
                                          win, groups, want[0], want[1], want[2]);
    if (want[0]) gx = a;
    if (want[1]) gw = b;
    if (want[2]) gb = c;
    return {gx, gw, gb};
  }
  const DType work = cpu_work_dtype(x.dtype());
  Tensor tx = want[0] ? Tensor::empty_cpu(x.shape(), work) : Tensor();
  Tensor tw = want[1] ? Tensor::empty_cpu(weight.shape(), work) : Tensor();
  Tensor tb = want[2] ? Tensor::empty_cpu({weight.size(0)}, work) : Tensor();
  cpu::conv2d_backward(cpu_work(grad, work), cpu_work(x, work), cpu_work(weight, work), tx, tw, tb, win, groups);
  if (want[0]) gx = cpu_cast_back(tx, x.dtype());
  if (want[1]) gw = cpu_cast_back(tw, x.dtype());
  if (want[2]) gb = cpu_cast_back(tb, x.dtype());
  return {gx, gw, gb};
}

}  // namespace lucid::ops
