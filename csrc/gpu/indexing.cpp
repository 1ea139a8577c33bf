#include "gpu/indexing.h"

#include <string>

#include "core/errors.h"
#include "gpu/array.h"

namespace lucid::gpu {

std::pair<int64_t, int64_t> index_bounds(const Tensor& index) {
  auto s = stream();
  const mx::array& a = array_of(index);
  mx::array lo = mx::astype(mx::min(a, false, s), mx::int64, s);
  mx::array hi = mx::astype(mx::max(a, false, s), mx::int64, s);
  mx::eval({lo, hi});
  return {lo.item<int64_t>(), hi.item<int64_t>()};
}

Tensor wrap_negative(const Tensor& index, int64_t size) {
  auto s = stream();
  const mx::array& a = array_of(index);
  mx::array zero(int64_t{0}), n(size);
  return wrap(mx::where(mx::less(a, zero, s), mx::add(a, n, s), a, s));
}

namespace {

// Index values are validated against an MLX axis length (< 2^31) before any
// kernel runs, so int32 holds them; every MLX backend gathers with int32.
mx::array as_int32(const Tensor& index) { return mx::astype(array_of(index), mx::int32, stream()); }

// The part of `a` that an index of shape `like` touches off `axis`
// (PyTorch lets the index be smaller than the input on the other axes).
mx::array leading_block(const mx::array& a, const Shape& like, int axis) {
  mx::Shape start(a.ndim(), 0), stop = a.shape();
  bool whole = true;
  for (int d = 0; d < static_cast<int>(a.ndim()); ++d)
    if (d != axis && stop[d] != like[d]) {
      stop[d] = static_cast<int32_t>(like[d]);
      whole = false;
    }
  return whole ? a : mx::slice(a, start, stop, stream());
}

// MLX's Metal scatter rejects 8-byte element types, so int64 takes another
// path on every backend of the GPU stream (one behaviour everywhere):
// - put: the int32 *position* of each source element is scattered instead of
//   its value, then the winning values are gathered (gathers take any type).
//   With repeated targets one writer wins whole, as for other dtypes.
// - add: the values are split into eight 8-bit limbs; each limb is
//   scatter-added in uint32 (exact while at most kMaxLimbAdds sources share a
//   target) and the limb sums are recombined in uint64 with wrapping adds,
//   which is exactly the two's-complement int64 sum the CPU stream computes.
constexpr int64_t kMaxLimbAdds = int64_t{0xffffffff} / 255;

mx::array scatter_wide(const mx::array& block, const mx::array& idx, const mx::array& vals, int axis,
                       bool accumulate) {
  auto s = stream();
  if (!accumulate) {
    mx::array pos = mx::reshape(mx::arange(static_cast<int>(vals.size()), mx::int32, s), vals.shape(), s);
    mx::array win = mx::put_along_axis(mx::full(block.shape(), mx::array(-1, mx::int32), s), idx, pos, axis, s);
    mx::array flat = mx::reshape(vals, {static_cast<int>(vals.size())}, s);
    mx::array picked = mx::take(flat, mx::maximum(win, mx::array(0, mx::int32), s), s);
    return mx::where(mx::greater_equal(win, mx::array(0, mx::int32), s), picked, block, s);
  }
  check(idx.shape(axis) <= kMaxLimbAdds, "scatter_add(): the GPU stream adds int64 values exactly only when at most " +
                                             std::to_string(kMaxLimbAdds) + " sources share a target; got an index "
                                             "with " + std::to_string(idx.shape(axis)) + " along the scatter axis");
  mx::array u = mx::astype(vals, mx::uint64, s);
  mx::array total = mx::astype(block, mx::uint64, s);
  for (int k = 0; k < 8; ++k) {
    mx::array limb = mx::astype(mx::bitwise_and(mx::right_shift(u, mx::array(uint64_t(8 * k)), s),
                                                mx::array(uint64_t(0xff)), s),
                                mx::uint32, s);
    mx::array sums = mx::scatter_add_axis(mx::zeros(block.shape(), mx::uint32, s), idx, limb, axis, s);
    total = mx::add(total, mx::left_shift(mx::astype(sums, mx::uint64, s), mx::array(uint64_t(8 * k)), s), s);
  }
  return mx::astype(total, block.dtype(), s);
}

}  // namespace

Tensor gather(const Tensor& x, int axis, const Tensor& index) {
  auto s = stream();
  const mx::array& a = array_of(x);
  if (a.ndim() == 0) return wrap(mx::broadcast_to(a, to_mx_shape(index.shape()), s));  // every index is 0
  return wrap(mx::take_along_axis(leading_block(a, index.shape(), axis), as_int32(index), axis, s));
}

Tensor scatter(const Tensor& self, int axis, const Tensor& index, const Tensor& src, bool accumulate) {
  auto s = stream();
  const mx::array& a = array_of(self);
  if (index.numel() == 0) return wrap(a);
  if (a.ndim() == 0) {  // every index is 0
    mx::array v = mx::reshape(leading_block(array_of(src), index.shape(), -1), {}, s);
    return wrap(accumulate ? mx::add(a, v, s) : v);
  }
  mx::array idx = as_int32(index);
  mx::array vals = leading_block(array_of(src), index.shape(), -1);
  Shape block_shape = index.shape();
  block_shape[axis] = self.shape()[axis];
  mx::array block = leading_block(a, block_shape, axis);
  mx::array added = mx::size_of(block.dtype()) == 8 ? scatter_wide(block, idx, vals, axis, accumulate)
                    : accumulate                       ? mx::scatter_add_axis(block, idx, vals, axis, s)
                                                       : mx::put_along_axis(block, idx, vals, axis, s);
  if (block.shape() == a.shape()) return wrap(added);
  mx::Shape zeros(a.ndim(), 0);
  return wrap(mx::slice_update(a, added, zeros, added.shape(), s));
}

Tensor index_select(const Tensor& x, int axis, const Tensor& index) {
  return wrap(mx::take(array_of(x), as_int32(index), axis, stream()));
}

}  // namespace lucid::gpu
