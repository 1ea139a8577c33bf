#include "cpu/linalg.h"

#include <climits>
#include <vector>

#include "core/convert.h"
#include "core/dispatch.h"
#include "core/errors.h"
#include "core/thread_pool.h"
#include "cpu/blas.h"
#include "cpu/copy.h"

namespace lucid::cpu {

namespace {

// How BLAS reads the last two axes of an operand: row-major (ld = row
// stride) or transposed (ld = column stride). Anything else is copied.
struct MatView {
  Tensor t;
  bool trans = false;
  int64_t ld = 0;
};

MatView as_blas(const Tensor& x) {
  int nd = x.ndim();
  int64_t rows = x.shape()[nd - 2], cols = x.shape()[nd - 1];
  int64_t rs = x.strides()[nd - 2], cs = x.strides()[nd - 1];
  if ((cs == 1 || cols <= 1) && rs >= std::max<int64_t>(cols, 1) && rs <= INT_MAX) return {x, false, rs};
  if ((rs == 1 || rows <= 1) && cs >= std::max<int64_t>(rows, 1) && cs <= INT_MAX) return {x, true, cs};
  Tensor c = Tensor::empty_cpu(x.shape(), x.dtype());
  copy_into(x, c);
  return {c, false, std::max<int64_t>(cols, 1)};
}

// Calls fn(batch index, offset into a, offset into b) for every batch entry.
template <class F>
void for_each_batch(const Tensor& a, const Tensor& b, const Shape& batch, F&& fn) {
  int nb = static_cast<int>(batch.size());
  int64_t count = 1;
  for (int64_t d : batch) count *= d;
  std::vector<int64_t> idx(nb, 0);
  int64_t oa = a.offset(), ob = b.offset();
  for (int64_t i = 0; i < count; ++i) {
    fn(i, oa, ob);
    for (int d = nb - 1; d >= 0; --d) {
      ++idx[d];
      oa += a.strides()[d];
      ob += b.strides()[d];
      if (idx[d] < batch[d]) break;
      oa -= a.strides()[d] * batch[d];
      ob -= b.strides()[d] * batch[d];
      idx[d] = 0;
    }
  }
}

// float32 (sgemm) or float64 (dgemm).
template <class T>
void gemm_batched(const Tensor& a_in, const Tensor& b_in, const Tensor& out) {
  int nd = out.ndim();
  int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a_in.shape()[nd - 1];
  check<ValueError>(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX, "matmul(): matrix dimension too large for BLAS");
  T* c = out.data<T>();
  if (k == 0) {  // also covers an empty batch
    for (int64_t i = 0; i < out.numel(); ++i) c[i] = T(0);
    return;
  }
  MatView A = as_blas(a_in), B = as_blas(b_in);
  Shape batch(out.shape().begin(), out.shape().end() - 2);
  const T* pa = static_cast<const T*>(A.t.impl().storage->data);
  const T* pb = static_cast<const T*>(B.t.impl().storage->data);
  // One big product when A's batch rows are one row-major block and B is
  // shared by every batch entry (a linear layer's x @ W).
  bool b_shared = true;
  for (int d = 0; d < nd - 2; ++d) b_shared = b_shared && (B.t.strides()[d] == 0 || batch[d] == 1);
  if (!batch.empty() && b_shared && !A.trans && A.t.is_contiguous()) {
    int64_t rows = out.numel() / n;
    if (rows <= INT_MAX) {
      blas::gemm(false, B.trans, rows, n, k, T(1), pa + A.t.offset(), k, pb + B.t.offset(), B.ld, T(0), c, n);
      return;
    }
  }
  for_each_batch(A.t, B.t, batch, [&](int64_t i, int64_t oa, int64_t ob) {
    blas::gemm(A.trans, B.trans, m, n, k, T(1), pa + oa, A.ld, pb + ob, B.ld, T(0), c + i * m * n, n);
  });
}

// Exact integer product: int64 accumulation (wrapping), i-k-j order so the
// inner loop runs along contiguous rows of b and out.
template <class T>
void int_matmul(const Tensor& a_in, const Tensor& b_in, const Tensor& out) {
  int nd = out.ndim();
  int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a_in.shape()[nd - 1];
  Shape batch(out.shape().begin(), out.shape().end() - 2);
  T* c = out.data<T>();
  const T* base_a = static_cast<const T*>(a_in.impl().storage->data);
  const T* base_b = static_cast<const T*>(b_in.impl().storage->data);
  int64_t ars = a_in.strides()[nd - 2], acs = a_in.strides()[nd - 1];
  int64_t brs = b_in.strides()[nd - 2], bcs = b_in.strides()[nd - 1];
  std::vector<std::pair<int64_t, int64_t>> offsets;
  for_each_batch(a_in, b_in, batch, [&](int64_t, int64_t oa, int64_t ob) { offsets.push_back({oa, ob}); });
  int64_t tasks = static_cast<int64_t>(offsets.size()) * m;
  parallel_for(tasks, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(k * n, 1)), [&](int64_t lo, int64_t hi) {
    std::vector<uint64_t> acc(n);
    for (int64_t t = lo; t < hi; ++t) {
      int64_t bi = t / m, i = t % m;
      const T* pa = base_a + offsets[bi].first + i * ars;
      const T* pb = base_b + offsets[bi].second;
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t p = 0; p < k; ++p) {
        uint64_t av = static_cast<uint64_t>(static_cast<int64_t>(pa[p * acs]));
        const T* brow = pb + p * brs;
        for (int64_t j = 0; j < n; ++j) acc[j] += av * static_cast<uint64_t>(static_cast<int64_t>(brow[j * bcs]));
      }
      T* crow = c + (bi * m + i) * n;
      for (int64_t j = 0; j < n; ++j) crow[j] = convert<T>(acc[j]);
    }
  });
}

}  // namespace

void matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) gemm_batched<T>(a, b, out);
    else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) int_matmul<T>(a, b, out);
    else throw TypeError("internal: matmul kernel got an unsupported dtype");
  });
}

}  // namespace lucid::cpu
