#include "gpu/shape.h"

#include "gpu/array.h"
#include "gpu/copy.h"

namespace lucid::gpu {

Tensor reshape(const Tensor& x, const Shape& shape) {
  return wrap(mx::reshape(array_of(x), to_mx_shape(shape), stream()));
}

// Transposes and broadcasts are views: their logical size may exceed memory
// (an expanded tensor) without anything being allocated.
Tensor permute(const Tensor& x, const std::vector<int>& dims) {
  return wrap_view(mx::transpose(array_of(x), dims, stream()));
}

Tensor expand(const Tensor& x, const Shape& shape) {
  return wrap_view(mx::broadcast_to(array_of(x), to_mx_shape(shape), stream()));
}

namespace {

// MLX slices with positive strides here; axes with a negative step are
// sliced over the same elements in increasing order, then reversed.
struct PositiveSlice {
  mx::Shape start, stop, strides;
  std::vector<int> reversed;  // axes to reverse afterwards
};

PositiveSlice positive_slice(const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                             const Shape& lengths) {
  PositiveSlice p;
  for (size_t i = 0; i < lengths.size(); ++i) {
    int64_t len = lengths[i], st = steps[i];
    int64_t lo = st > 0 || len == 0 ? starts[i] : starts[i] + (len - 1) * st;
    // With at most one element the step does not matter, and it may not fit
    // MLX's int32 (x[::2**62] would become a step of 0).
    int64_t step = len <= 1 ? 1 : (st > 0 ? st : -st);
    if (len == 0) lo = 0;
    p.start.push_back(static_cast<int32_t>(lo));
    p.stop.push_back(static_cast<int32_t>(len == 0 ? lo : lo + (len - 1) * step + 1));
    p.strides.push_back(static_cast<int32_t>(step));
    if (st < 0 && len > 1) p.reversed.push_back(static_cast<int>(i));
  }
  return p;
}

mx::array reverse_axes(mx::array a, const std::vector<int>& axes) {
  auto s = stream();
  for (int ax : axes) {
    int n = a.shape(ax);
    a = mx::take(a, mx::arange(n - 1, -1, -1, s), ax, s);
  }
  return a;
}

}  // namespace

Tensor slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
             const Shape& lengths) {
  PositiveSlice p = positive_slice(starts, steps, lengths);
  mx::array a = mx::slice(array_of(x), p.start, p.stop, p.strides, stream());
  return wrap(reverse_axes(a, p.reversed));
}

void slice_assign(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                  const Shape& lengths, const Tensor& value) {
  auto s = stream();
  const mx::array& a = array_of(x);
  PositiveSlice p = positive_slice(starts, steps, lengths);
  // gpu::astype converts as the CPU stream's copy_ does (float -> int saturates).
  mx::array v = value.dtype() == x.dtype() ? array_of(value) : array_of(astype(value, x.dtype()));
  v = mx::broadcast_to(v, to_mx_shape(lengths), s);
  v = reverse_axes(v, p.reversed);
  rebind(x, mx::slice_update(a, v, p.start, p.stop, p.strides, s));
}

Tensor cat(const std::vector<Tensor>& inputs, int axis) {
  std::vector<mx::array> arrays;
  for (const Tensor& t : inputs) arrays.push_back(array_of(t));
  return wrap(mx::concatenate(arrays, axis, stream()));
}

}  // namespace lucid::gpu
