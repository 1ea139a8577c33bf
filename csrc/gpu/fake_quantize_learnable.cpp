// fake_quantize_learnable on the GPU stream (formulas: docs/numerics.md).
// Each MLX op rounds once; nothing is fused into an FMA because every step is
// its own op, evaluated uncompiled.
#include "gpu/fake_quantize_learnable.h"

#include "gpu/array.h"

namespace lucid::gpu {

namespace {

mx::array view_of(const Tensor& t, const Shape& view) {
  return mx::reshape(array_of(t), to_mx_shape(view), stream());
}

mx::array f32(float v) { return mx::array(v, mx::float32); }

}  // namespace

Tensor fake_quantize_learnable(const Tensor& x, const Tensor& s, const Tensor& inv, const Tensor& zf,
                               const Shape& x_view, const Shape& p_view, float lo, float hi) {
  auto st = stream();
  mx::array xa = view_of(x, x_view);
  mx::array sc = view_of(s, p_view), ic = view_of(inv, p_view), z = view_of(zf, p_view);
  mx::array t = mx::multiply(xa, ic, st);
  mx::array q = mx::add(z, mx::round(t, 0, st), st);
  mx::array c = mx::clip(q, f32(lo), f32(hi), st);
  mx::array y = mx::multiply(mx::subtract(c, z, st), sc, st);
  mx::array nan = mx::view(mx::array(static_cast<uint32_t>(0x7fc00000u), mx::uint32), mx::float32, st);
  y = mx::where(mx::isnan(xa, st), nan, y, st);
  return wrap(mx::reshape(y, to_mx_shape(x.shape()), st));
}

std::tuple<Tensor, Tensor, Tensor> fake_quantize_learnable_terms(const Tensor& x, const Tensor& dy, const Tensor& s,
                                                                  const Tensor& inv, const Tensor& zb,
                                                                  const Shape& x_view, const Shape& p_view,
                                                                  float lo, float hi, float grad_factor) {
  auto st = stream();
  mx::array xa = view_of(x, x_view), g = view_of(dy, x_view);
  mx::array sc = view_of(s, p_view), ic = view_of(inv, p_view), z = view_of(zb, p_view);
  mx::array gf = f32(grad_factor);
  mx::array xq = mx::round(mx::add(z, mx::multiply(xa, ic, st), st), 0, st);
  mx::array in = mx::logical_and(mx::greater_equal(xq, f32(lo), st), mx::less_equal(xq, f32(hi), st), st);
  mx::array above = mx::greater(xq, f32(hi), st);
  mx::array dx = mx::multiply(g, mx::astype(in, mx::float32, st), st);
  // In range: ((dy * (xfq - x)) * inv) * gf with xfq = (xq - zb) * s.
  mx::array xfq = mx::multiply(mx::subtract(xq, z, st), sc, st);
  mx::array ds_in = mx::multiply(mx::multiply(mx::multiply(g, mx::subtract(xfq, xa, st), st), ic, st), gf, st);
  // Clamped: (dy * (q_edge - zb)) * gf; NaN takes the lower edge.
  mx::array edge = mx::where(above, mx::subtract(f32(hi), z, st), mx::subtract(f32(lo), z, st), st);
  mx::array ds_out = mx::multiply(mx::multiply(g, edge, st), gf, st);
  mx::array dz_out = mx::multiply(mx::multiply(mx::negative(g, st), sc, st), gf, st);
  mx::array ds = mx::where(in, ds_in, ds_out, st);
  mx::array dz = mx::where(in, f32(0.0f), dz_out, st);
  mx::Shape shape = to_mx_shape(x.shape());
  return {wrap(mx::reshape(dx, shape, st)), wrap(mx::reshape(ds, shape, st)), wrap(mx::reshape(dz, shape, st))};
}

}  // namespace lucid::gpu
