#include "ops/qelementwise.h"

#include "core/convert.h"
#include "core/errors.h"
#include "cpu/qelementwise.h"
#include "gpu/qelementwise.h"
#include "ops/copy.h"
#include "ops/qparams.h"

namespace lucid::ops {

using namespace quant_detail;

namespace {

void check_codes(const char* fn, const char* name, const Tensor& q) {
  if (!(q.dtype() == DType::Int8 || q.dtype() == DType::UInt8))
    throw TypeError(arg(fn, name) + " must hold int8 or uint8 codes, got " + dtype_name(q.dtype()));
}

// A per-tensor (scale, zero point) as the kernels take it: the scale as the
// float32 quantize / dequantize would store (then checked as they check it),
// the zero point within [lo, hi] (the codes' range for an input, the grid for
// the output).
cpu::QAffine affine(const char* fn, const char* sname, const char* zname, double scale, int64_t zp, int64_t lo,
                    int64_t hi, const std::string& range) {
  const float s = convert<float>(scale);
  checked_scales(fn, sname, &s, 1, 1);
  if (!(zp >= lo && zp <= hi)) zero_point_range_error(fn, zname, lo, hi, range, zp, 0, 1);
  return {s, static_cast<int32_t>(zp)};
}

cpu::QAffine input_affine(const char* fn, const char* sname, const char* zname, const Tensor& q, double scale,
                          int64_t zp) {
  const bool u8 = q.dtype() == DType::UInt8;
  return affine(fn, sname, zname, scale, zp, u8 ? 0 : -128, u8 ? 255 : 127,
                u8 ? "the range of uint8 codes" : "the range of int8 codes");
}

Grid output_grid(const char* fn, const std::string& qdtype) {
  Grid g = grid_of(qdtype, fn);
  if (!(g.storage == DType::Int8 || g.storage == DType::UInt8))
    throw TypeError(arg(fn, "qdtype") + " must be a grid stored in 8 bits (qint8, quint8, qint4, quint4, qint2, " +
                    "quint2), got '" + g.name + "'");
  return g;
}

gpu::QGrid on_gpu(cpu::QAffine p) { return {p.s, p.z}; }

Tensor qbinary(const char* fn, QBinaryOp op, const Tensor& a, double sa, int64_t za, const Tensor& b, double sb,
               int64_t zb, double scale, int64_t zp, const std::string& qdtype, bool reference) {
  common_device(fn, {&a, &b});
  check_codes(fn, "a", a);
  check_codes(fn, "b", b);
  if (a.dtype() != b.dtype())
    throw TypeError(std::string(fn) + "(): arguments 'a' and 'b' must hold codes of one dtype, got " +
                    dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
  if (a.shape() != b.shape())
    throw ValueError(std::string(fn) + "(): arguments 'a' and 'b' must have one shape, got " + shape_str(a.shape()) +
                     " and " + shape_str(b.shape()));
  const cpu::QAffine pa = input_affine(fn, "a_scale", "a_zero_point", a, sa, za);
  const cpu::QAffine pb = input_affine(fn, "b_scale", "b_zero_point", b, sb, zb);
  const Grid g = output_grid(fn, qdtype);
  const cpu::QAffine po = affine(fn, "scale", "zero_point", scale, zp, g.qmin, g.qmax, g.name);
  const cpu::QBounds bounds = cpu::QBounds::of(g.qmin, g.qmax);
  if (a.device() == Device::GPU) {
    check(!reference, std::string(fn) + "(): the reference kernel runs on the CPU stream only");
    return gpu::qbinary(op, a, on_gpu(pa), b, on_gpu(pb), on_gpu(po), bounds.lo, bounds.hi, g.storage);
  }
  Tensor out = Tensor::empty_cpu(a.shape(), g.storage);
  cpu::qbinary(op, contiguous(a), pa, contiguous(b), pb, out, po, bounds, reference);
  return out;
}

}  // namespace

Tensor qadd(const Tensor& a, double a_scale, int64_t a_zero_point, const Tensor& b, double b_scale,
            int64_t b_zero_point, double scale, int64_t zero_point, const std::string& qdtype, bool relu,
            bool reference) {
  return qbinary(relu ? "qadd_relu" : "qadd", relu ? QBinaryOp::AddRelu : QBinaryOp::Add, a, a_scale, a_zero_point,
                 b, b_scale, b_zero_point, scale, zero_point, qdtype, reference);
}

Tensor qmul(const Tensor& a, double a_scale, int64_t a_zero_point, const Tensor& b, double b_scale,
            int64_t b_zero_point, double scale, int64_t zero_point, const std::string& qdtype, bool reference) {
  return qbinary("qmul", QBinaryOp::Mul, a, a_scale, a_zero_point, b, b_scale, b_zero_point, scale, zero_point,
                 qdtype, reference);
}

Tensor qcat(const std::vector<Tensor>& xs, const std::vector<double>& scales, const std::vector<int64_t>& zero_points,
            int64_t dim, double scale, int64_t zero_point, const std::string& qdtype, bool reference) {
  const char* fn = "qcat";
  if (xs.empty()) throw ValueError(arg(fn, "xs") + " must hold at least one tensor");
  if (scales.size() != xs.size() || zero_points.size() != xs.size())
    throw ValueError(std::string(fn) + "(): arguments 'scales' and 'zero_points' must hold one value per tensor (" +
                     std::to_string(xs.size()) + "), got " + std::to_string(scales.size()) + " and " +
                     std::to_string(zero_points.size()));
  const Tensor& x0 = xs[0];
  const int64_t nd = x0.ndim();
  if (nd == 0) throw ValueError(arg(fn, "xs") + " must hold tensors of at least one dimension, got a 0-d tensor");
  if (!(dim >= -nd && dim < nd))
    throw ValueError(arg(fn, "dim") + " is out of range for a " + std::to_string(nd) + "-d input: expected a dim in [" +
                     std::to_string(-nd) + ", " + std::to_string(nd - 1) + "], got " + std::to_string(dim));
  if (dim < 0) dim += nd;
  Shape out_shape = x0.shape();
  out_shape[dim] = 0;
  std::vector<cpu::QAffine> ps;
  ps.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    common_device(fn, {&x0, &x});
    check_codes(fn, "xs", x);
    if (x.dtype() != x0.dtype())
      throw TypeError(arg(fn, "xs") + " must hold codes of one dtype, got " + dtype_name(x0.dtype()) + " and " +
                      dtype_name(x.dtype()) + " (tensor " + std::to_string(i) + ")");
    bool same = x.ndim() == nd;
    for (int64_t d = 0; same && d < nd; ++d) same = d == dim || x.size(d) == x0.size(d);
    if (!same)
      throw ValueError(arg(fn, "xs") + " must hold tensors of equal sizes except along dim " + std::to_string(dim) +
                       ", got " + shape_str(x0.shape()) + " and " + shape_str(x.shape()) + " (tensor " +
                       std::to_string(i) + ")");
    out_shape[dim] += x.size(dim);
    ps.push_back(input_affine(fn, "scales", "zero_points", x, scales[i], zero_points[i]));
  }
  const Grid g = output_grid(fn, qdtype);
  const cpu::QAffine po = affine(fn, "scale", "zero_point", scale, zero_point, g.qmin, g.qmax, g.name);
  const cpu::QBounds bounds = cpu::QBounds::of(g.qmin, g.qmax);
  if (x0.device() == Device::GPU) {
    check(!reference, std::string(fn) + "(): the reference kernel runs on the CPU stream only");
    std::vector<gpu::QGrid> gp;
    for (const auto& p : ps) gp.push_back(on_gpu(p));
    return gpu::qcat(xs, gp, dim, on_gpu(po), bounds.lo, bounds.hi, g.storage);
  }
  std::vector<Tensor> cs;
  cs.reserve(xs.size());
  for (const auto& x : xs) cs.push_back(contiguous(x));
  Tensor out = Tensor::empty_cpu(out_shape, g.storage);
  cpu::qcat(cs, ps, dim, out, po, bounds, reference);
  return out;
}

}  // namespace lucid::ops
