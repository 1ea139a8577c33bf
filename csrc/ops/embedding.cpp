#include "ops/embedding.h"

#include <algorithm>

#include "core/errors.h"
#include "cpu/embedding.h"
#include "gpu/embedding.h"
#include "ops/copy.h"
#include "ops/nn_common.h"

namespace lucid::ops {

using namespace nn_detail;

namespace {

// Contiguous int64 indices, every one inside [0, rows); IndexError otherwise.
Tensor checked_indices(const Tensor& idx, int64_t rows, const std::string& fn) {
  check<TypeError>(is_integral(idx.dtype()), fn + "(): argument 'indices' must be an integer tensor, got " +
                                                 dtype_name(idx.dtype()));
  if (idx.numel() == 0) return idx.device() == Device::CPU ? contiguous(astype(idx, DType::Int64)) : idx;
  int64_t lo, hi;
  Tensor i64;
  if (idx.device() == Device::GPU) {
    std::tie(lo, hi) = gpu::index_range(idx);
  } else {
    i64 = contiguous(idx.dtype() == DType::Int64 ? idx : astype(idx, DType::Int64));
    const int64_t* p = i64.data<int64_t>();
    auto [mn, mx] = std::minmax_element(p, p + i64.numel());
    lo = *mn, hi = *mx;
  }
  check<IndexError>(lo >= 0 && hi < rows, fn + "(): index out of range: expected indices in [0, " +
                                              std::to_string(rows) + "), got values in [" + std::to_string(lo) +
                                              ", " + std::to_string(hi) + "]");
  return idx.device() == Device::GPU ? idx : i64;
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  const std::string fn = "embedding";
  common_device(fn.c_str(), {&weight, &indices});
  check(weight.ndim() == 2, fn + "(): expected a 2-D weight (num_embeddings, embedding_dim), got shape " +
                                shape_str(weight.shape()));
  Tensor idx = checked_indices(indices, weight.size(0), fn);
  if (weight.device() == Device::GPU) return gpu::embedding(weight, idx);
  Shape out_shape = indices.shape();
  out_shape.push_back(weight.size(1));
  Tensor out = Tensor::empty_cpu(out_shape, weight.dtype());
  cpu::embedding(contiguous(weight), idx, out);
  return out;
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights, int64_t padding_idx) {
  const std::string fn = "embedding_backward";
  common_device(fn.c_str(), {&grad, &indices});
  require_floating(grad, fn, "grad");
  check(num_weights >= 0, fn + "(): num_weights must be non-negative");
  Shape expect = indices.shape();
  check(grad.ndim() == indices.ndim() + 1 && Shape(grad.shape().begin(), grad.shape().end() - 1) == expect,
        fn + "(): grad of shape " + shape_str(grad.shape()) + " does not match indices of shape " +
            shape_str(indices.shape()));
  Tensor idx = checked_indices(indices, num_weights, fn);
  const int64_t d = grad.size(grad.ndim() - 1);
  if (grad.device() == Device::GPU) return gpu::embedding_backward(grad, idx, num_weights, padding_idx);
  const DType work = cpu_work_dtype(grad.dtype());
  Tensor gw = Tensor::empty_cpu({num_weights, d}, work);
  cpu::embedding_backward(cpu_work(grad, work), idx, gw, padding_idx);
  return cpu_cast_back(gw, grad.dtype());
}

}  // namespace lucid::ops
