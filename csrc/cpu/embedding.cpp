#include "cpu/embedding.h"

#include <algorithm>
#include <cstring>

#include "core/thread_pool.h"

namespace lucid::cpu {

void embedding(const Tensor& weight, const Tensor& idx, const Tensor& out) {
  const int64_t n = idx.numel(), row_bytes = weight.size(1) * static_cast<int64_t>(itemsize(weight.dtype()));
  const auto* src = static_cast<const char*>(weight.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  const int64_t* ip = idx.data<int64_t>();
  parallel_for(n, 256, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) std::memcpy(dst + i * row_bytes, src + ip[i] * row_bytes, row_bytes);
  });
}

namespace {

template <class T>
void embedding_backward_typed(const Tensor& g, const Tensor& idx, const Tensor& gw, int64_t padding_idx) {
  const int64_t n = idx.numel(), d = gw.size(1);
  const T* gp = g.data<T>();
  const int64_t* ip = idx.data<int64_t>();
  T* out = gw.data<T>();
  std::fill(out, out + gw.numel(), T(0));
  // Repeated indices add into one row, so split the work by columns, not by index.
  parallel_for(d, 64, [&](int64_t c0, int64_t c1) {
    for (int64_t i = 0; i < n; ++i) {
      if (ip[i] == padding_idx) continue;
      T* row = out + ip[i] * d;
      const T* src = gp + i * d;
      for (int64_t c = c0; c < c1; ++c) row[c] += src[c];
    }
  });
}

}  // namespace

void embedding_backward(const Tensor& g, const Tensor& idx, const Tensor& gw, int64_t padding_idx) {
  if (gw.dtype() == DType::Float64) embedding_backward_typed<double>(g, idx, gw, padding_idx);
  else embedding_backward_typed<float>(g, idx, gw, padding_idx);
}

}  // namespace lucid::cpu
