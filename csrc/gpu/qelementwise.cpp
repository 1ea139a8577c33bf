#include "gpu/qelementwise.h"

#include "gpu/array.h"

namespace lucid::gpu {

namespace {

// (q - z) exactly in int32, then fl(float(d) * s): gpu::dequantize's operations.
mx::array dequant(const Tensor& q, QGrid p) {
  auto s = stream();
  mx::array d = mx::subtract(mx::astype(array_of(q), mx::int32, s), mx::array(p.z, mx::int32), s);
  return mx::multiply(mx::astype(d, mx::float32, s), mx::array(p.s, mx::float32), s);
}

// gpu::quantize's operations: t = x / s (a division), round half to even, + z,
// clip, and NaN -> z chosen from t in the integer domain.
mx::array quant(const mx::array& x, QGrid p, float lo, float hi, DType storage) {
  auto s = stream();
  mx::array t = mx::divide(x, mx::array(p.s, mx::float32), s);
  mx::array v = mx::add(mx::round(t, 0, s), mx::astype(mx::array(p.z, mx::int32), mx::float32, s), s);
  mx::array c = mx::clip(v, mx::array(lo, mx::float32), mx::array(hi, mx::float32), s);
  mx::array nan = mx::isnan(t, s);
  c = mx::where(nan, mx::array(lo, mx::float32), c, s);
  return mx::where(nan, mx::astype(mx::array(p.z, mx::int32), to_mx(storage), s), mx::astype(c, to_mx(storage), s), s);
}

}  // namespace

Tensor qbinary(QBinaryOp op, const Tensor& a, QGrid pa, const Tensor& b, QGrid pb, QGrid po, float lo, float hi,
               DType storage) {
  auto s = stream();
  mx::array x = dequant(a, pa), y = dequant(b, pb);
  mx::array v = op == QBinaryOp::Mul ? mx::multiply(x, y, s) : mx::add(x, y, s);
  if (op == QBinaryOp::AddRelu) {  // lucid.relu on this stream: relu(NaN) = NaN, relu(-0) = +0
    mx::array zero = mx::zeros({}, mx::float32, s);
    v = mx::where(mx::logical_not(mx::less_equal(v, zero, s), s), v, zero, s);
  }
  return wrap(quant(v, po, lo, hi, storage));
}

Tensor qcat(const std::vector<Tensor>& xs, const std::vector<QGrid>& ps, int64_t dim, QGrid po, float lo, float hi,
            DType storage) {
  std::vector<mx::array> parts;
  parts.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) parts.push_back(quant(dequant(xs[i], ps[i]), po, lo, hi, storage));
  return wrap(mx::concatenate(parts, static_cast<int>(dim), stream()));
}

}  // namespace lucid::gpu
