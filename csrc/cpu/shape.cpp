#include "cpu/shape.h"

#include <algorithm>
#include <cstring>

#include "core/thread_pool.h"
#include "cpu/copy.h"

namespace lucid::cpu {

std::optional<Strides> view_strides(const Shape& shape, const Strides& strides, const Shape& new_shape) {
  if (numel(shape) == 0) return contiguous_strides(new_shape);
  // Size-1 axes carry no layout; what remains splits into runs ("chunks")
  // whose axes are contiguous with each other. A view exists when the new
  // axes group, in order, into products equal to each chunk's element count.
  std::vector<int64_t> sizes, steps;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1) {
      sizes.push_back(shape[i]);
      steps.push_back(strides[i]);
    }
  Strides out(new_shape.size(), 1);
  size_t next = 0;  // first new axis not yet assigned
  size_t i = 0;
  while (i < sizes.size()) {
    size_t j = i;  // chunk is sizes[i..j]
    int64_t chunk = sizes[i];
    while (j + 1 < sizes.size() && steps[j] == steps[j + 1] * sizes[j + 1]) chunk *= sizes[++j];
    size_t first = next;
    int64_t prod = 1;
    while (next < new_shape.size() && prod < chunk) prod *= new_shape[next++];
    if (prod != chunk) return std::nullopt;
    int64_t st = steps[j];  // the chunk's innermost stride
    for (size_t k = next; k-- > first;) {
      out[k] = st;
      st *= new_shape[k];
    }
    i = j + 1;
  }
  for (; next < new_shape.size(); ++next)
    if (new_shape[next] != 1) return std::nullopt;
  return out;
}

Tensor strided_view(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                    const Shape& lengths) {
  int64_t offset = x.offset();
  Strides strides(lengths.size());
  bool empty = numel(lengths) == 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (!empty) offset += starts[i] * x.strides()[i];
    // An axis of length 0 or 1 is never stepped along: keep its stride
    // non-negative so a reversed single element can still be a plain view.
    strides[i] = lengths[i] > 1 ? x.strides()[i] * steps[i] : x.strides()[i];
  }
  return Tensor::view_cpu(x.impl().storage, lengths, strides, offset, x.dtype());
}

void cat_into(const std::vector<Tensor>& inputs, int axis, const Tensor& out) {
  int nd = out.ndim();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= out.shape()[d];
  for (int d = axis + 1; d < nd; ++d) inner *= out.shape()[d];
  size_t isz = itemsize(out.dtype());
  size_t out_row = static_cast<size_t>(out.shape()[axis] * inner) * isz;  // bytes per outer index
  std::vector<int64_t> starts(nd, 0), steps(nd, 1);
  for (const Tensor& t : inputs) {
    Shape lengths = out.shape();
    lengths[axis] = t.shape()[axis];
    size_t block = static_cast<size_t>(lengths[axis] * inner) * isz;
    if (block > 0 && outer > 0 && t.is_contiguous()) {
      // Contiguous input: one memcpy per outer index.
      const char* src = static_cast<const char*>(t.raw_data());
      char* dst = static_cast<char*>(out.raw_data()) + starts[axis] * inner * isz;
      int64_t grain = std::max<int64_t>(1, kElementwiseGrain / static_cast<int64_t>(block / isz));
      parallel_for(outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) std::memcpy(dst + o * out_row, src + o * block, block);
      });
    } else if (block > 0) {
      copy_into(t, strided_view(out, starts, steps, lengths));
    }
    starts[axis] += lengths[axis];
  }
}

}  // namespace lucid::cpu
