#include "cpu/indexing.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/dispatch.h"
#include "core/thread_pool.h"

namespace lucid::cpu {

namespace {

// Row-major walk over `shape`, keeping the running element offsets of up to
// three strided operands (the index space of gather / scatter).
struct Odometer {
  const Shape& shape;
  std::vector<int64_t> pos;
  explicit Odometer(const Shape& s) : shape(s), pos(s.size(), 0) {}
  // Advances pos; adds/subtracts strides of each operand into offs.
  template <size_t N>
  void next(std::array<int64_t, N>& offs, const std::array<const Strides*, N>& strides) {
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      ++pos[d];
      for (size_t k = 0; k < N; ++k) offs[k] += (*strides[k])[d];
      if (pos[d] < shape[d]) return;
      for (size_t k = 0; k < N; ++k) offs[k] -= (*strides[k])[d] * shape[d];
      pos[d] = 0;
    }
  }
};

// Strides with the gathered axis zeroed: its offset comes from the index value.
Strides without_axis(const Strides& s, int axis) {
  Strides out = s;
  if (!out.empty()) out[axis] = 0;
  return out;
}

// a + b for accumulation: integers wrap (two's complement) instead of
// overflowing, half types add in float.
template <class T>
T add_wrapping(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    using C = compute_t<T>;
    return T(static_cast<C>(a) + static_cast<C>(b));
  }
}

}  // namespace

std::pair<int64_t, int64_t> index_bounds(const Tensor& index) {
  const int64_t* p = index.data<int64_t>();
  auto [lo, hi] = std::minmax_element(p, p + index.numel());
  return {*lo, *hi};
}

Tensor wrap_negative(const Tensor& index, int64_t size) {
  Tensor out = Tensor::empty_cpu(index.shape(), DType::Int64);
  const int64_t* s = index.data<int64_t>();
  int64_t* d = out.data<int64_t>();
  for (int64_t i = 0, n = index.numel(); i < n; ++i) d[i] = s[i] < 0 ? s[i] + size : s[i];
  return out;
}

void gather(const Tensor& x, int axis, const Tensor& index, const Tensor& out) {
  int64_t n = index.numel();
  if (n == 0) return;
  const int64_t* id = index.data<int64_t>();
  int64_t axis_stride = x.ndim() == 0 ? 0 : x.strides()[axis];
  Strides xs = without_axis(x.strides(), axis);
  dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xd = x.data<T>();
    T* od = out.data<T>();
    Odometer walk(index.shape());
    std::array<int64_t, 1> off{0};
    std::array<const Strides*, 1> st{&xs};
    for (int64_t k = 0; k < n; ++k) {
      od[k] = xd[off[0] + id[k] * axis_stride];
      walk.next(off, st);
    }
  });
}

void scatter(const Tensor& out, int axis, const Tensor& index, const Tensor& src, bool accumulate) {
  int64_t n = index.numel();
  if (n == 0) return;
  const int64_t* id = index.data<int64_t>();
  int64_t axis_stride = out.ndim() == 0 ? 0 : out.strides()[axis];
  Strides os = without_axis(out.strides(), axis);
  // Serial on purpose: repeated indices add into the same element.
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* sd = src.data<T>();
    T* od = out.data<T>();
    Odometer walk(index.shape());
    std::array<int64_t, 3> off{0, 0, 0};  // out (without axis), src, index
    std::array<const Strides*, 3> st{&os, &src.strides(), &index.strides()};
    for (int64_t k = 0; k < n; ++k) {
      T& dst = od[off[0] + id[off[2]] * axis_stride];
      dst = accumulate ? add_wrapping(dst, sd[off[1]]) : sd[off[1]];
      walk.next(off, st);
    }
  });
}

void index_select(const Tensor& x, int axis, const Tensor& index, const Tensor& out) {
  const Shape& shape = x.shape();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < x.ndim(); ++d) inner *= shape[d];
  int64_t rows = shape[axis], m = index.numel();
  if (outer * m * inner == 0) return;
  size_t row_bytes = static_cast<size_t>(inner) * itemsize(x.dtype());
  const int64_t* id = index.data<int64_t>();
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(inner, 1));
  parallel_for(outer * m, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t o = r / m, j = r % m;
      std::memcpy(dst + r * row_bytes, src + (o * rows + id[j]) * row_bytes, row_bytes);
    }
  });
}

}  // namespace lucid::cpu
