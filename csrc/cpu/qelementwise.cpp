// QFunctional's add / add_relu / mul / cat on int8 / uint8 codes, one pass each.
// Per element, in this order (docs/numerics.md, "Quantized modules"):
//   x = fl(float(a - za) * sa); y = fl(float(b - zb) * sb)      dequantize
//   v = fl(x + y) | fl(x * y); add_relu: v = !(v <= 0) ? v : 0   the float op
//   code = quantize(v, s, z)                                    quantize_code
// which are the composite path's operations exactly (each one correctly rounded
// float32 operation, no contraction: -ffp-contract=off), so the codes match it
// bit for bit. The loops vectorize (int widening, cvtdq2ps, mulps, addps, divps,
// roundps, min/max, packs): an AVX2 clone chosen at load time on x86-64 glibc;
// the *_scalar twins stay scalar and are what the tests hold the clones against.
#include "cpu/qelementwise.h"

#include <algorithm>
#include <type_traits>

#include "core/errors.h"
#include "core/thread_pool.h"
#include "cpu/quantize_loop.h"

// An AVX-512 clone beside quantize_loop.h's AVX2 one: these loops are bound by the
// float division and conversions, and twice the lanes halve them.
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && !defined(__clang__)
#define LUCID_QELEM_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define LUCID_QELEM_CLONES
#endif

namespace lucid::cpu {

namespace {

template <class A>
inline float dequant(A q, QAffine p) {
  return static_cast<float>(static_cast<int32_t>(q) - p.z) * p.s;
}

template <QBinaryOp Op>
inline float combine(float x, float y) {
  if constexpr (Op == QBinaryOp::Mul) {
    return x * y;
  } else {
    float v = x + y;
    if constexpr (Op == QBinaryOp::AddRelu) v = !(v <= 0.0f) ? v : 0.0f;  // relu(NaN) = NaN, as lucid.relu
    return v;
  }
}

// quantize_code for a v known not to be NaN (x / s is then never NaN either: s is
// finite and > 0): the same operations without the NaN lane's compare and blend.
inline int32_t quantize_finite(float v, float s, int32_t z, float lo, float hi) {
  float r = std::nearbyint(v / s) + static_cast<float>(z);
  r = r < lo ? lo : r;
  r = r > hi ? hi : r;
  return static_cast<int32_t>(r);
}

// Finite: no input can dequantize to +-inf (see finite_range), so v is never NaN and
// the cheaper quantize_finite gives quantize_code's result.
template <QBinaryOp Op, bool Finite, class A, class Q>
LUCID_QELEM_CLONES void qbinary_run(const A* __restrict a, const A* __restrict b, Q* __restrict out, int64_t n,
                                    QAffine pa, QAffine pb, QAffine po, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = combine<Op>(dequant(a[i], pa), dequant(b[i], pb));
    if constexpr (Finite) out[i] = static_cast<Q>(quantize_finite(v, po.s, po.z, lo, hi));
    else out[i] = static_cast<Q>(quantize_code(v, po.s, po.z, lo, hi));
  }
}

// Whether every fl((a - za) * sa) op fl((b - zb) * sb) of 8-bit codes is finite:
// |a - za| <= 255, and the bound is computed in double (its margin, 0.1% below
// float32's maximum, covers the float32 roundings of the products and the sum).
template <QBinaryOp Op>
bool finite_range(QAffine pa, QAffine pb) {
  const double x = 255.0 * pa.s, y = 255.0 * pb.s, limit = 3.4e38;
  return Op == QBinaryOp::Mul ? (x < limit && y < limit && x * y < limit) : x + y < limit;
}

template <QBinaryOp Op, class A, class Q>
LUCID_NO_VECTORIZE void qbinary_scalar(const A* a, const A* b, Q* out, int64_t n, QAffine pa, QAffine pb, QAffine po,
                                       float lo, float hi) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<Q>(quantize_code(combine<Op>(dequant(a[i], pa), dequant(b[i], pb)), po.s, po.z, lo, hi));
}

template <class A, class Q>
LUCID_QELEM_CLONES void requant_run(const A* __restrict a, Q* __restrict out, int64_t n, QAffine pa, QAffine po,
                                    float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Q>(quantize_code(dequant(a[i], pa), po.s, po.z, lo, hi));
}

template <class A, class Q>
LUCID_NO_VECTORIZE void requant_scalar(const A* a, Q* out, int64_t n, QAffine pa, QAffine po, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Q>(quantize_code(dequant(a[i], pa), po.s, po.z, lo, hi));
}

// f(A{}, Q{}) with the input and output code types.
template <class F>
void dispatch_codes(DType in, DType out, F&& f) {
  auto with_out = [&](auto a) {
    if (out == DType::Int8) f(a, int8_t{});
    else if (out == DType::UInt8) f(a, uint8_t{});
    else throw TypeError("internal: quantized elementwise output must be int8 or uint8 codes");
  };
  if (in == DType::Int8) with_out(int8_t{});
  else if (in == DType::UInt8) with_out(uint8_t{});
  else throw TypeError("internal: quantized elementwise input must be int8 or uint8 codes");
}

template <QBinaryOp Op>
void qbinary_op(const Tensor& a, QAffine pa, const Tensor& b, QAffine pb, const Tensor& out, QAffine po,
                QBounds bounds, bool reference) {
  dispatch_codes(a.dtype(), out.dtype(), [&](auto at, auto qt) {
    using A = decltype(at);
    using Q = decltype(qt);
    const A* pa_ = a.data<A>();
    const A* pb_ = b.data<A>();
    Q* po_ = out.data<Q>();
    const int64_t n = out.numel();
    if (reference) {
      qbinary_scalar<Op, A, Q>(pa_, pb_, po_, n, pa, pb, po, bounds.lo, bounds.hi);
      return;
    }
    const bool finite = finite_range<Op>(pa, pb);
    parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      if (finite) qbinary_run<Op, true, A, Q>(pa_ + lo, pb_ + lo, po_ + lo, hi - lo, pa, pb, po, bounds.lo, bounds.hi);
      else qbinary_run<Op, false, A, Q>(pa_ + lo, pb_ + lo, po_ + lo, hi - lo, pa, pb, po, bounds.lo, bounds.hi);
    });
  });
}

}  // namespace

void qbinary(QBinaryOp op, const Tensor& a, QAffine pa, const Tensor& b, QAffine pb, const Tensor& out, QAffine po,
             QBounds bounds, bool reference) {
  switch (op) {
    case QBinaryOp::Add: return qbinary_op<QBinaryOp::Add>(a, pa, b, pb, out, po, bounds, reference);
    case QBinaryOp::AddRelu: return qbinary_op<QBinaryOp::AddRelu>(a, pa, b, pb, out, po, bounds, reference);
    case QBinaryOp::Mul: return qbinary_op<QBinaryOp::Mul>(a, pa, b, pb, out, po, bounds, reference);
  }
}

void qcat(const std::vector<Tensor>& xs, const std::vector<QAffine>& ps, int64_t dim, const Tensor& out, QAffine po,
          QBounds bounds, bool reference) {
  // out viewed as (outer, sum of the inputs' rows): input i fills columns
  // [off_i, off_i + row_i) of every outer row, row_i = its size along dim times
  // the trailing sizes.
  const Shape& os = out.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= os[d];
  for (size_t d = dim + 1; d < os.size(); ++d) inner *= os[d];
  const int64_t out_row = os[dim] * inner;
  dispatch_codes(xs.empty() ? out.dtype() : xs[0].dtype(), out.dtype(), [&](auto at, auto qt) {
    using A = decltype(at);
    using Q = decltype(qt);
    Q* dst = out.data<Q>();
    int64_t off = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const A* src = xs[i].data<A>();
      const int64_t row = xs[i].size(dim) * inner;
      auto rows = [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          if (reference) requant_scalar<A, Q>(src + r * row, dst + r * out_row + off, row, ps[i], po, bounds.lo, bounds.hi);
          else requant_run<A, Q>(src + r * row, dst + r * out_row + off, row, ps[i], po, bounds.lo, bounds.hi);
        }
      };
      if (row > 0) {
        if (reference) rows(0, outer);
        else parallel_for(outer, std::max<int64_t>(1, kElementwiseGrain / row), rows);
      }
      off += row;
    }
  });
}

}  // namespace lucid::cpu
