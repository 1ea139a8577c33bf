#include "ops/sort.h"

#include "core/errors.h"
#include "cpu/sort.h"
#include "gpu/sort.h"
#include "ops/copy.h"

namespace lucid::ops {

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  common_device("sort", {&x});
  int axis = normalize_axis(dim, x.ndim(), "sort", "dim");
  if (x.ndim() == 0) axis = 0;
  if (x.device() == Device::GPU) {
    if (x.numel() == 0) return {clone(x), full(x.shape(), 0.0, DType::Int64, x.device())};
    return gpu::sort(x, axis, descending);
  }
  Tensor xc = contiguous(x);
  Tensor values = Tensor::empty_cpu(x.shape(), x.dtype());
  Tensor indices = Tensor::empty_cpu(x.shape(), DType::Int64);
  if (x.numel() > 0) cpu::sort(xc, axis, descending, values, indices);
  return {values, indices};
}

}  // namespace lucid::ops
