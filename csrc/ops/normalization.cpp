#include "ops/normalization.h"

#include <string>

#include "core/errors.h"
#include "cpu/normalization.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/reduction.h"

namespace lucid::ops {

namespace {

// Whether the fused CPU rows apply: float32 everywhere, contiguous, `dims` the
// trailing axes, weight and bias of their shape, rows within the kernel's limit.
bool fused_rows(const Tensor& x, const std::optional<Tensor>& w, const std::optional<Tensor>& b,
                const std::vector<int64_t>& dims, const Tensor& eps, int64_t& row) {
  if (x.device() != Device::CPU || x.dtype() != DType::Float32 || !x.is_contiguous() ||
      eps.dtype() != DType::Float32 || eps.device() != Device::CPU || eps.numel() != 1)
    return false;
  const int64_t nd = x.ndim(), k = static_cast<int64_t>(dims.size());
  if (k < 1 || k > nd) return false;
  row = 1;
  for (int64_t i = 0; i < k; ++i) {
    if (dims[static_cast<size_t>(i)] != nd - k + i) return false;
    row *= x.shape()[static_cast<size_t>(nd - k + i)];
  }
  Shape trailing(x.shape().end() - k, x.shape().end());
  for (const std::optional<Tensor>* p : {&w, &b})
    if (*p && ((*p)->device() != Device::CPU || (*p)->dtype() != DType::Float32 || !(*p)->is_contiguous() ||
               (*p)->shape() != trailing))
      return false;
  return row >= 1 && row <= cpu::softmax_row_limit();
}

}  // namespace

LayerNormParts layer_norm(const Tensor& x, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                          const std::vector<int64_t>& dims, const Tensor& eps) {
  int64_t row = 0;
  if (fused_rows(x, weight, bias, dims, eps, row)) {
    Shape kept = x.shape();
    for (int64_t d : dims) kept[static_cast<size_t>(d)] = 1;
    LayerNormParts p;
    p.y = Tensor::empty_cpu(x.shape(), DType::Float32);
    p.rstd = Tensor::empty_cpu(kept, DType::Float32);
    const bool affine = weight || bias;
    if (affine) p.xhat = Tensor::empty_cpu(x.shape(), DType::Float32);
    cpu::layer_norm_rows(x, row, weight ? weight->data<float>() : nullptr, bias ? bias->data<float>() : nullptr,
                         *eps.data<float>(), p.y, affine ? &p.xhat : nullptr, p.rstd);
    if (!affine) p.xhat = p.y;
    return p;
  }
  const Dims axes = dims;
  Tensor centered = sub(x, mean(x, axes, true));
  Tensor var = mean(mul(centered, centered), axes, true);
  LayerNormParts p;
  p.rstd = rsqrt(add(var, eps));
  p.xhat = mul(centered, p.rstd);
  p.y = p.xhat;
  if (weight) p.y = mul(p.y, *weight);
  if (bias) p.y = add(p.y, *bias);
  return p;
}

Tensor softmax(const Tensor& x, int64_t axis, bool log) {
  const char* fn = log ? "log_softmax" : "softmax";
  common_device(fn, {&x});
  const int a = normalize_axis(axis, x.ndim(), fn, "dim");
  const int64_t size = x.ndim() ? x.shape()[static_cast<size_t>(a)] : 1;
  if (x.device() == Device::CPU && x.dtype() == DType::Float32 && x.is_contiguous() && a == x.ndim() - 1 &&
      size >= 1 && size <= cpu::softmax_row_limit()) {
    Tensor out = Tensor::empty_cpu(x.shape(), x.dtype());
    cpu::softmax_rows(x, out, log);
    return out;
  }
  const Dims dims = std::vector<int64_t>{a};
  // Over an empty axis the result is empty (as in PyTorch) and there is no max to shift by.
  Tensor shifted = size == 0 ? x : sub(x, amax(x, dims, true));
  if (log) return sub(shifted, ops::log(sum(exp(shifted), dims, true, std::nullopt)));
  Tensor e = exp(shifted);
  return div(e, sum(e, dims, true, std::nullopt));
}

}  // namespace lucid::ops
