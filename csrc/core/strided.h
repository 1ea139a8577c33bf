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
    // Coalesce first: drop size-1 axes and merge an axis into the next when every
    // operand steps over the pair as over one axis (stride_i == stride_{i+1} *
    // size_{i+1}). The elements are visited in the same row-major order, in longer
    // runs: a (1, C, 1, 1) operand against (N, C, H, W) gives runs of H*W, not W
    // (8-element runs made a broadcast multiply 7x a contiguous one).
    std::vector<int64_t> dims;
    std::array<std::vector<int64_t>, N> st;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0) return;
      if (shape[i] == 1) continue;
      bool merge = !dims.empty();
      for (int k = 0; k < N && merge; ++k) merge = st[k].back() == strides[k][i] * shape[i];
      if (merge) {
        dims.back() *= shape[i];
        for (int k = 0; k < N; ++k) st[k].back() = strides[k][i];
      } else {
        dims.push_back(shape[i]);
        for (int k = 0; k < N; ++k) st[k].push_back(strides[k][i]);
      }
    }
    int nd = static_cast<int>(dims.size());
    if (nd == 0) {  // a 0-d or all-ones shape: one element
      std::array<int64_t, N> off{}, one{};
      fn(off, int64_t{1}, one);
      return;
    }
    int64_t inner = dims[nd - 1];
    std::array<int64_t, N> inner_st;
    for (int k = 0; k < N; ++k) inner_st[k] = st[k][nd - 1];
    int64_t outer = 1;
    for (int i = 0; i < nd - 1; ++i) outer *= dims[i];
    std::vector<int64_t> idx(nd > 1 ? nd - 1 : 1, 0);
    std::array<int64_t, N> off{};
    for (int64_t o = 0; o < outer; ++o) {
      fn(off, inner, inner_st);
      for (int i = nd - 2; i >= 0; --i) {  // odometer increment
        ++idx[i];
        for (int k = 0; k < N; ++k) off[k] += st[k][i];
        if (idx[i] < dims[i]) break;
        for (int k = 0; k < N; ++k) off[k] -= st[k][i] * dims[i];
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
