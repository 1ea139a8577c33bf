// CPU-stream stable sort: std::stable_sort of positions per line, with NaN
// ordered above every number (PyTorch's and numpy's convention).
#include "cpu/sort.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/dispatch.h"

namespace lucid::cpu {

void sort(const Tensor& x, int axis, bool descending, const Tensor& values, const Tensor& indices) {
  const Shape& shape = x.shape();
  int64_t outer = 1, inner = 1, n = shape.empty() ? 1 : shape[axis];
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* in = x.data<T>();
    T* vo = values.data<T>();
    int64_t* io = indices.data<int64_t>();
    std::vector<C> key(n);
    std::vector<int64_t> pos(n);
    // a before b? NaN is the largest key.
    auto less = [&](int64_t a, int64_t b) {
      C u = key[a], v = key[b];
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(v)) return !std::isnan(u);
        if (std::isnan(u)) return false;
      }
      return u < v;
    };
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t c = 0; c < inner; ++c) {
        const int64_t base = a * n * inner + c;
        for (int64_t i = 0; i < n; ++i) key[i] = static_cast<C>(in[base + i * inner]);
        std::iota(pos.begin(), pos.end(), int64_t{0});
        if (descending)
          std::stable_sort(pos.begin(), pos.end(), [&](int64_t p, int64_t q) { return less(q, p); });
        else
          std::stable_sort(pos.begin(), pos.end(), less);
        for (int64_t i = 0; i < n; ++i) {
          vo[base + i * inner] = in[base + pos[i] * inner];
          io[base + i * inner] = pos[i];
        }
      }
  });
}

}  // namespace lucid::cpu
