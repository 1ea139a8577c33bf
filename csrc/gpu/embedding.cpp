#include "gpu/embedding.h"

#include "gpu/array.h"

namespace lucid::gpu {

Tensor embedding(const Tensor& weight, const Tensor& idx) {
  return wrap(mx::take(array_of(weight), array_of(idx), 0, stream()));
}

Tensor embedding_backward(const Tensor& g, const Tensor& idx, int64_t num_weights, int64_t padding_idx) {
  auto s = stream();
  const mx::array& ga = array_of(g);
  const int d = ga.shape(-1);
  mx::array flat = mx::reshape(mx::astype(array_of(idx), mx::int64, s), {-1}, s);
  mx::array rows = mx::reshape(ga, {-1, 1, d}, s);  // updates: [n, 1 (the indexed axis), d]
  if (padding_idx >= 0) {
    mx::array keep = mx::reshape(mx::not_equal(flat, mx::array(padding_idx), s), {-1, 1, 1}, s);
    rows = mx::multiply(rows, mx::astype(keep, ga.dtype(), s), s);
  }
  mx::array zeros = mx::zeros({int(num_weights), d}, ga.dtype(), s);
  return wrap(mx::scatter_add(zeros, flat, rows, 0, s));
}

std::pair<int64_t, int64_t> index_range(const Tensor& idx) {
  auto s = stream();
  const mx::array& a = mx::astype(array_of(idx), mx::int64, s);
  mx::array lo = mx::min(a, false, s), hi = mx::max(a, false, s);
  mx::eval({lo, hi});
  return {lo.item<int64_t>(), hi.item<int64_t>()};
}

}  // namespace lucid::gpu
