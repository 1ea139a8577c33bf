#include "ops/linear.h"

#include "core/errors.h"
#include "cpu/linear.h"
#include "gpu/linear.h"
#include "ops/copy.h"
#include "ops/nn_common.h"

namespace lucid::ops {

using namespace nn_detail;

namespace {

void check_linear(const Tensor& x, const Tensor& w, const std::string& fn) {
  require_floating(x, fn, "input");
  require_floating(w, fn, "weight");
  check(w.ndim() == 2, fn + "(): expected a 2-D weight (out_features, in_features), got shape " + shape_str(w.shape()));
  check(x.ndim() >= 1 && x.size(x.ndim() - 1) == w.size(1),
        fn + "(): expected input with last dimension in_features=" + std::to_string(w.size(1)) + ", got shape " +
            shape_str(x.shape()));
  check<TypeError>(x.dtype() == w.dtype(), fn + "(): input and weight must have one dtype, got " +
                                               dtype_name(x.dtype()) + " and " + dtype_name(w.dtype()));
}

// A CPU tensor as a contiguous [rows, cols] matrix in the work dtype (leading
// axes flattened), or reshaped to `shape` — views over the same storage.
Tensor cpu_view(const Tensor& x, const Shape& shape, DType work) {
  Tensor c = cpu_work(x, work);
  return Tensor::view_cpu(c.impl().storage, shape, contiguous_strides(shape), c.offset(), work);
}
Shape matrix_shape(const Shape& s) {
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < s.size(); ++i) rows *= s[i];
  return {rows, s.back()};
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  const std::string fn = "linear";
  if (bias) common_device(fn.c_str(), {&x, &weight, &*bias});
  else common_device(fn.c_str(), {&x, &weight});
  check_linear(x, weight, fn);
  const int64_t o = weight.size(0), k = weight.size(1);
  if (bias) {
    check(bias->ndim() == 1 && bias->size(0) == o,
          fn + "(): expected bias of shape (" + std::to_string(o) + ",), got " + shape_str(bias->shape()));
    check<TypeError>(bias->dtype() == x.dtype(), fn + "(): bias must have the input's dtype " +
                                                     dtype_name(x.dtype()) + ", got " + dtype_name(bias->dtype()));
  }
  Shape out_shape = x.shape();
  out_shape.back() = o;
  if (x.device() == Device::GPU) return gpu::linear(x, weight, bias ? *bias : Tensor());
  const DType work = cpu_work_dtype(x.dtype());
  Tensor x2 = cpu_view(x, matrix_shape(x.shape()), work);
  Tensor y = Tensor::empty_cpu(out_shape, work);
  cpu::linear(x2, cpu_work(weight, work), bias ? cpu_work(*bias, work) : Tensor(),
              cpu_view(y, matrix_shape(out_shape), work));
  (void)k;
  return cpu_cast_back(y, x.dtype());
}

std::tuple<std::optional<Tensor>, std::optional<Tensor>, std::optional<Tensor>> linear_backward(
    const Tensor& grad, const Tensor& x, const Tensor& weight, const std::vector<bool>& want) {
  const std::string fn = "linear_backward";
  common_device(fn.c_str(), {&grad, &x, &weight});
  check_linear(x, weight, fn);
  check(want.size() == 3, fn + "(): 'want' must have 3 flags (input, weight, bias)");
  Shape y_shape = x.shape();
  y_shape.back() = weight.size(0);
  check(grad.shape() == y_shape, fn + "(): expected grad of shape " + shape_str(y_shape) + ", got " +
                                     shape_str(grad.shape()));
  const int64_t o = weight.size(0);
  Tensor g = grad.dtype() == x.dtype() ? grad : astype(grad, x.dtype());
  Tensor gx, gw, gb;
  if (x.device() == Device::GPU) {
    std::tie(gx, gw, gb) = gpu::linear_backward(g, x, weight, want[0], want[1], want[2]);
  } else {
    const DType work = cpu_work_dtype(x.dtype());
    Tensor gx_full;
    if (want[0]) gx_full = Tensor::empty_cpu(x.shape(), work), gx = cpu_view(gx_full, matrix_shape(x.shape()), work);
    if (want[1]) gw = Tensor::empty_cpu(weight.shape(), work);
    if (want[2]) gb = Tensor::empty_cpu({o}, work);
    cpu::linear_backward(cpu_view(g, matrix_shape(g.shape()), work), cpu_view(x, matrix_shape(x.shape()), work),
                         cpu_work(weight, work), gx, gw, gb);
    if (want[0]) gx = cpu_cast_back(gx_full, x.dtype());
    if (gw.defined()) gw = cpu_cast_back(gw, x.dtype());
    if (gb.defined()) gb = cpu_cast_back(gb, x.dtype());
  }
  std::optional<Tensor> rx, rw, rb;
  if (want[0]) rx = gx;
  if (want[1]) rw = gw;
  if (want[2]) rb = gb;
  return {rx, rw, rb};
}

}  // namespace lucid::ops
