// CPU-stream cumsum / cumprod: one sequential pass per line, so the result
// is the left-to-right running sum (product) rounded after every step.
#include "cpu/scan.h"

#include "core/dispatch.h"

namespace lucid::cpu {

namespace {

// Views a contiguous tensor as (outer, n, inner) around `axis`.
void split(const Shape& shape, int axis, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  n = shape.empty() ? 1 : shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
}

template <bool Product>
void scan(const Tensor& x, int axis, const Tensor& out) {
  int64_t outer, n, inner;
  split(x.shape(), axis, outer, n, inner);
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw TypeError("internal: scan into bool");
    } else {
      using C = compute_t<T>;
      const T* in = x.data<T>();
      T* o = out.data<T>();
      for (int64_t a = 0; a < outer; ++a)
        for (int64_t c = 0; c < inner; ++c) {
          const int64_t base = a * n * inner + c;
          C acc = Product ? C(1) : C(0);
          for (int64_t i = 0; i < n; ++i) {
            C v = static_cast<C>(in[base + i * inner]);
            acc = Product ? static_cast<C>(acc * v) : static_cast<C>(acc + v);
            o[base + i * inner] = T(acc);
          }
        }
    }
  });
}

}  // namespace

void cumsum(const Tensor& x, int axis, const Tensor& out) { scan<false>(x, axis, out); }
void cumprod(const Tensor& x, int axis, const Tensor& out) { scan<true>(x, axis, out); }

}  // namespace lucid::cpu
