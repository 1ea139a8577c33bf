// Walks an N-d index space in row-major order for up to three strided
// operands, handing contiguous-innermost runs to a callback. CPU kernels use
// it for broadcasting and non-contiguous inputs; the common case (everything
// contiguous) never gets here.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace lucid {

template <int N>
struct StridedLoop {
  Shape shape;                       // iteration shape (ndim >= 1)
  std::array<Strides, N> strides;    // per operand, elements; 0 = broadcast

  // fn(std::array<int64_t,N> offsets, int64_t inner_len, std::array<int64_t,N> inner_strides)
  template <class F>
  void run(F&& fn) const {
    int nd = static_cast<int>(shape.size());
    if (nd == 0) {
      std::array<int64_t, N> off{}, st{};
      fn(off, int64_t{1}, st);
      return;
    }
    int64_t inner = shape[nd - 1];
    if (inner == 0) return;
    std::array<int64_t, N> inner_st;
    for (int k = 0; k < N; ++k) inner_st[k] = strides[k][nd - 1];
    int64_t outer = 1;
    for (int i = 0; i < nd - 1; ++i) outer *= shape[i];
    std::vector<int64_t> idx(nd > 1 ? nd - 1 : 1, 0);
    std::array<int64_t, N> off{};
    for (int64_t o = 0; o < outer; ++o) {
      fn(off, inner, inner_st);
      for (int i = nd - 2; i >= 0; --i) {  // odometer increment
        ++idx[i];
        for (int k = 0; k < N; ++k) off[k] += strides[k][i];
        if (idx[i] < shape[i]) break;
        for (int k = 0; k < N; ++k) off[k] -= strides[k][i] * shape[i];
        idx[i] = 0;
      }
    }
  }
};

// Strides of `src_shape` viewed as broadcast to `out_shape` (right-aligned,
// size-1 axes get stride 0).
inline Strides broadcast_strides(const Shape& src_shape, const Strides& src_strides, const Shape& out_shape) {
  Strides out(out_shape.size(), 0);
  size_t lead = out_shape.size() - src_shape.size();
  for (size_t i = 0; i < src_shape.size(); ++i)
    out[lead + i] = src_shape[i] == 1 ? 0 : src_strides[i];
  return out;
}

}  // namespace lucid
