#include "ops/pool.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/errors.h"
#include "core/window2d.h"
#include "cpu/pool.h"
#include "gpu/pool.h"
#include "ops/copy.h"
#include "ops/nn_common.h"

namespace lucid::ops {

using namespace nn_detail;

namespace {

void check_input(const Tensor& x, const std::string& fn, bool codes = false) {
  common_device(fn.c_str(), {&x});
  // Messages are built only on failure (this runs on every pooling call).
  if (codes) {
    if (!(x.dtype() == DType::UInt8 || x.dtype() == DType::Int8))
      throw TypeError(fn + "(): argument 'xq' must hold uint8 or int8 codes, got " + dtype_name(x.dtype()));
  } else {
    require_floating(x, fn, "input");
  }
  if (x.ndim() != 4) throw ValueError(fn + "(): expected a 4-D input (N, C, H, W), got shape " + shape_str(x.shape()));
}

// PyTorch's pooling output size: floor, or ceil with the rule that the last
// window must start inside the input or its left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (span + (ceil_mode ? s - 1 : 0)) / s + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

Window2d pool_window(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                     const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, bool ceil_mode,
                     const std::string& fn, bool codes = false) {
  check_input(x, fn, codes);
  require_ints(kernel, 2, fn, "kernel_size");
  require_ints(stride, 2, fn, "stride");
  require_ints(padding, 2, fn, "padding", true);
  require_ints(dilation, 2, fn, "dilation");
  // Sizes past int32 (MLX's shape type) are refused: no input is that large, and
  // bounded values keep dilation * (kernel - 1) and 2 * padding from overflowing.
  for (const auto& [values, arg] : {std::pair{&kernel, "kernel_size"}, {&padding, "padding"}, {&dilation, "dilation"}})
    for (int64_t v : *values)
      if (v > std::numeric_limits<int32_t>::max())
        throw ValueError(fn + "(): argument '" + arg + "' must be at most 2147483647, got " + ints_str(*values));
  Window2d win;
  win.kh = kernel[0], win.kw = kernel[1];
  // A stride past the padded extent gives one window, as that extent itself does;
  // clamping keeps pooled_size's arithmetic (and the GPU's int32 slice steps) in range.
  win.sh = std::min(stride[0], x.size(2) + 2 * padding[0] + 1);
  win.sw = std::min(stride[1], x.size(3) + 2 * padding[1] + 1);
  win.ph = padding[0], win.pw = padding[1], win.dh = dilation[0], win.dw = dilation[1];
  // Padding beyond half the (dilated) kernel would make windows of padding only.
  for (int a = 0; a < 2; ++a) {
    const int64_t eff = dilation[a] * (kernel[a] - 1) + 1;
    if (2 * padding[a] > eff)
      throw ValueError(fn + "(): padding should be at most half of the kernel size, got padding " +
                       ints_str(padding) + " for kernel_size " + ints_str(kernel));
  }
  win.oh = pooled_size(x.size(2), win.kh, win.sh, win.ph, win.dh, ceil_mode);
  win.ow = pooled_size(x.size(3), win.kw, win.sw, win.pw, win.dw, ceil_mode);
  if (win.oh == 1) win.sh = 1;  // one window: the stride is never taken
  if (win.ow == 1) win.sw = 1;
  if (!(win.oh >= 1 && win.ow >= 1))
    throw ValueError(fn + "(): input of shape " + shape_str(x.shape()) + " is too small for kernel_size " +
                     ints_str(kernel) + " with padding " + ints_str(padding) + " (output would be " +
                     std::to_string(win.oh) + "x" + std::to_string(win.ow) + ")");
  return win;
}

// Each output pixel's divisor, PyTorch's rule: the window clipped to the
// padded input (count_include_pad) or to the input itself; or the override.
std::vector<float> avg_divisor(const Window2d& win, int64_t h, int64_t w, bool count_include_pad,
                               int64_t divisor_override) {
  std::vector<float> div(static_cast<size_t>(win.oh * win.ow));
  for (int64_t r = 0; r < win.oh; ++r)
    for (int64_t q = 0; q < win.ow; ++q) {
      int64_t h0 = r * win.sh - win.ph, w0 = q * win.sw - win.pw;
      int64_t h1 = std::min(h0 + win.kh, h + win.ph), w1 = std::min(w0 + win.kw, w + win.pw);
      int64_t n = (h1 - h0) * (w1 - w0);
      if (!count_include_pad)
        n = (std::min(h1, h) - std::max<int64_t>(h0, 0)) * (std::min(w1, w) - std::max<int64_t>(w0, 0));
      div[r * win.ow + q] = static_cast<float>(divisor_override > 0 ? divisor_override : n);
    }
  return div;
}

void check_grad(const Tensor& grad, const Shape& expected, const std::string& fn) {
  if (grad.shape() != expected)
    throw ValueError(fn + "(): expected grad of shape " + shape_str(expected) + ", got " + shape_str(grad.shape()));
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d(const Tensor& x, const std::vector<int64_t>& kernel,
                                      const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                                      const std::vector<int64_t>& dilation, bool ceil_mode) {
  const Window2d win = pool_window(x, kernel, stride, padding, dilation, ceil_mode, "max_pool2d");
  const Shape out{x.size(0), x.size(1), win.oh, win.ow};
  if (x.device() == Device::GPU) {
    // MLX cannot argmax over an empty batch; there is nothing to pool.
    if (x.numel() == 0) return {full(out, 0.0, x.dtype(), x.device()), full(out, 0.0, DType::Int64, x.device())};
    auto [y, idx] = gpu::max_pool2d(x, win);
    return {y, idx};
  }
  const DType work = cpu_work_dtype(x.dtype());
  Tensor y = Tensor::empty_cpu(out, work), idx = Tensor::empty_cpu(out, DType::Int64);
  cpu::max_pool2d(cpu_work(x, work), y, idx, win);
  return {cpu_cast_back(y, x.dtype()), idx};
}

Tensor qmax_pool2d(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                   const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, bool ceil_mode) {
  const Window2d win = pool_window(x, kernel, stride, padding, dilation, ceil_mode, "qmax_pool2d", true);
  const Shape out{x.size(0), x.size(1), win.oh, win.ow};
  if (x.numel() == 0) return full(out, 0.0, x.dtype(), x.device());
  if (x.device() == Device::GPU) return gpu::qmax_pool2d(x, win);
  Tensor y = Tensor::empty_cpu(out, x.dtype());
  cpu::qmax_pool2d(contiguous(x), y, win);
  return y;
}

Tensor max_pool2d_backward(const Tensor& grad, const Tensor& indices, const Tensor& x) {
  const std::string fn = "max_pool2d_backward";
  common_device(fn.c_str(), {&grad, &indices, &x});
  check_input(x, fn);
  check_grad(indices, grad.shape(), fn);
  if (!(grad.ndim() == 4 && grad.size(0) == x.size(0) && grad.size(1) == x.size(1)))
    throw ValueError(fn + "(): grad of shape " + shape_str(grad.shape()) + " does not match input " +
                     shape_str(x.shape()));
  if (indices.dtype() != DType::Int64) throw TypeError(fn + "(): indices must be int64");
  if (x.device() == Device::GPU) {
    if (x.numel() == 0) return full(x.shape(), 0.0, x.dtype(), x.device());
    return gpu::max_pool2d_backward(astype(grad, x.dtype()), indices, x.shape());
  }
  const DType work = cpu_work_dtype(x.dtype());
  Tensor gx = Tensor::empty_cpu(x.shape(), work);
  cpu::max_pool2d_backward(cpu_work(grad, work), contiguous(indices), gx);
  return cpu_cast_back(gx, x.dtype());
}

Tensor avg_pool2d(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& padding, bool ceil_mode, bool count_include_pad,
                  int64_t divisor_override) {
  const Window2d win = pool_window(x, kernel, stride, padding, {1, 1}, ceil_mode, "avg_pool2d");
  const auto div = avg_divisor(win, x.size(2), x.size(3), count_include_pad, divisor_override);
  if (x.device() == Device::GPU) return gpu::avg_pool2d(x, win, div);
  const DType work = cpu_work_dtype(x.dtype());
  Tensor y = Tensor::empty_cpu({x.size(0), x.size(1), win.oh, win.ow}, work);
  cpu::avg_pool2d(cpu_work(x, work), y, win, div);
  return cpu_cast_back(y, x.dtype());
}

Tensor avg_pool2d_backward(const Tensor& grad, const Tensor& x, const std::vector<int64_t>& kernel,
                           const std::vector<int64_t>& stride, const std::vector<int64_t>& padding, bool ceil_mode,
                           bool count_include_pad, int64_t divisor_override) {
  const std::string fn = "avg_pool2d_backward";
  common_device(fn.c_str(), {&grad, &x});
  const Window2d win = pool_window(x, kernel, stride, padding, {1, 1}, ceil_mode, fn);
  check_grad(grad, {x.size(0), x.size(1), win.oh, win.ow}, fn);
  const auto div = avg_divisor(win, x.size(2), x.size(3), count_include_pad, divisor_override);
  if (x.device() == Device::GPU) return gpu::avg_pool2d_backward(astype(grad, x.dtype()), x, win, div);
  const DType work = cpu_work_dtype(x.dtype());
  Tensor gx = Tensor::empty_cpu(x.shape(), work);
  cpu::avg_pool2d_backward(cpu_work(grad, work), gx, win, div);
  return cpu_cast_back(gx, x.dtype());
}

Tensor adaptive_avg_pool2d(const Tensor& x, const std::vector<int64_t>& output_size) {
  const std::string fn = "adaptive_avg_pool2d";
  check_input(x, fn);
  require_ints(output_size, 2, fn, "output_size");
  check(x.size(2) > 0 && x.size(3) > 0, fn + "(): expected a non-empty spatial size, got input of shape " +
                                            shape_str(x.shape()));
  if (x.device() == Device::GPU) return gpu::adaptive_avg_pool2d(x, output_size[0], output_size[1]);
  const DType work = cpu_work_dtype(x.dtype());
  Tensor y = Tensor::empty_cpu({x.size(0), x.size(1), output_size[0], output_size[1]}, work);
  cpu::adaptive_avg_pool2d(cpu_work(x, work), y);
  return cpu_cast_back(y, x.dtype());
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad, const Tensor& x) {
  const std::string fn = "adaptive_avg_pool2d_backward";
  common_device(fn.c_str(), {&grad, &x});
  check_input(x, fn);
  check(grad.ndim() == 4 && grad.size(0) == x.size(0) && grad.size(1) == x.size(1) && grad.size(2) > 0 &&
            grad.size(3) > 0,
        fn + "(): grad of shape " + shape_str(grad.shape()) + " does not match input " + shape_str(x.shape()));
  if (x.device() == Device::GPU) return gpu::adaptive_avg_pool2d_backward(astype(grad, x.dtype()), x);
  const DType work = cpu_work_dtype(x.dtype());
  Tensor gx = Tensor::empty_cpu(x.shape(), work);
  cpu::adaptive_avg_pool2d_backward(cpu_work(grad, work), gx);
  return cpu_cast_back(gx, x.dtype());
}

}  // namespace lucid::ops
