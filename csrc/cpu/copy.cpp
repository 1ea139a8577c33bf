#include "cpu/copy.h"

#include <cstring>

#include "core/strided.h"
#include "core/thread_pool.h"
#include "core/convert.h"

namespace lucid::cpu {

namespace {

template <class To, class From>
void convert_contiguous(const From* src, To* dst, int64_t n) {
  parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = convert<To>(src[i]);
  });
}

}  // namespace

void copy_into(const Tensor& src, const Tensor& dst) {
  int64_t n = dst.numel();
  if (n == 0) return;
  bool same_shape = src.shape() == dst.shape() && dst.is_contiguous();
  if (same_shape && src.is_contiguous() && src.dtype() == dst.dtype()) {
    std::memcpy(dst.raw_data(), src.raw_data(), n * itemsize(dst.dtype()));
    return;
  }
  dispatch(src.dtype(), [&](auto stag) {
    using S = typename decltype(stag)::type;
    dispatch(dst.dtype(), [&](auto dtag) {
      using D = typename decltype(dtag)::type;
      const S* s = src.data<S>();
      D* d = dst.data<D>();
      if (same_shape && src.is_contiguous()) {
        convert_contiguous<D, S>(s, d, n);
        return;
      }
      StridedLoop<2> loop{dst.shape(),
                          {broadcast_strides(src.shape(), src.strides(), dst.shape()), dst.strides()}};
      if (loop.shape.empty()) {
        d[0] = convert<D>(s[0]);
        return;
      }
      loop.run([&](auto off, int64_t len, auto st) {
        const S* sp = s + off[0];
        D* dp = d + off[1];
        for (int64_t i = 0; i < len; ++i) dp[i * st[1]] = convert<D>(sp[i * st[0]]);
      });
    });
  });
}

void fill(const Tensor& dst, double value) {
  dispatch(dst.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v = convert<T>(value);
    T* d = dst.data<T>();
    int64_t n = dst.numel();
    parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) d[i] = v;
    });
  });
}

}  // namespace lucid::cpu
