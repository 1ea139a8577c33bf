// Integer matrix product with exact int32 accumulation and requantization
// (docs/numerics.md). A plain exact kernel: the zero points are subtracted
// once into int16 panels, then each output is an int16 x int16 -> int32 dot
// product, which compilers vectorize (pmaddwd). The ops layer limits K so no
// partial sum can overflow.
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/errors.h"
#include "core/thread_pool.h"
#include "cpu/quantize_loop.h"

namespace lucid::cpu {

namespace {

template <class Q>
void centered(const Q* src, int64_t rows, int64_t k, const int32_t* z, bool z_per_row, int16_t* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    int32_t zr = z_per_row ? z[r] : z[0];
    for (int64_t i = 0; i < k; ++i) dst[r * k + i] = static_cast<int16_t>(static_cast<int32_t>(src[r * k + i]) - zr);
  }
}

LUCID_QUANT_CLONES int32_t dot_i16(const int16_t* a, const int16_t* b, int64_t k) {
  int32_t acc = 0;
  for (int64_t i = 0; i < k; ++i) acc += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return acc;
}

}  // namespace

void qmatmul_accumulate(const Tensor& x, int32_t zx, const Tensor& w, const int32_t* zw, const int32_t* bias,
                        const Tensor& acc) {
  int64_t K = x.shape().back(), N = w.size(0);
  int64_t M = 1;  // rows of the flattened (M, K) activation, also when K = 0
  for (int i = 0; i + 1 < x.ndim(); ++i) M *= x.size(i);
  std::vector<int16_t> xc(static_cast<size_t>(M * K)), wc(static_cast<size_t>(N * K));
  if (x.dtype() == DType::UInt8) centered(x.data<uint8_t>(), M, K, &zx, false, xc.data());
  else centered(x.data<int8_t>(), M, K, &zx, false, xc.data());
  centered(w.data<int8_t>(), N, K, zw, true, wc.data());
  int32_t* out = acc.data<int32_t>();
  int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, N * K));
  parallel_for(M, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t m = lo; m < hi; ++m)
      for (int64_t n = 0; n < N; ++n) {
        // The sum is exact; bias addition wraps in two's complement exactly
        // as int32 addition does on the GPU stream.
        uint32_t a = static_cast<uint32_t>(dot_i16(xc.data() + m * K, wc.data() + n * K, K));
        if (bias) a += static_cast<uint32_t>(bias[n]);
        out[m * N + n] = static_cast<int32_t>(a);
      }
  });
}

void qmatmul_to_float(const Tensor& acc, const float* scale, const Tensor& out) {
  int64_t N = acc.shape().back(), M = N ? acc.numel() / N : 0;
  const int32_t* a = acc.data<int32_t>();
  float* y = out.data<float>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) y[m * N + n] = static_cast<float>(a[m * N + n]) * scale[n];
}

void qmatmul_requantize(const Tensor& acc, const float* mult, int32_t zy, QBounds b, const Tensor& out) {
  int64_t N = acc.shape().back(), M = N ? acc.numel() / N : 0;
  const int32_t* a = acc.data<int32_t>();
  float zf = static_cast<float>(zy);
  auto store = [&](auto* q) {
    using Q = std::remove_pointer_t<decltype(q)>;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        float t = static_cast<float>(a[m * N + n]) * mult[n];
        float v = std::nearbyint(t) + zf;
        v = v < b.lo ? b.lo : v;
        v = v > b.hi ? b.hi : v;
        q[m * N + n] = static_cast<Q>(static_cast<int32_t>(v));
      }
  };
  switch (out.dtype()) {
    case DType::Int8: store(out.data<int8_t>()); break;
    case DType::UInt8: store(out.data<uint8_t>()); break;
    case DType::Int32: store(out.data<int32_t>()); break;
    default: throw TypeError("internal: qmatmul output storage");
  }
}

}  // namespace lucid::cpu
