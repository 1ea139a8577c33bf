#include "ops/linalg.h"

#include <string>

#include "core/errors.h"
#include "cpu/linalg.h"
#include "gpu/linalg.h"
#include "ops/copy.h"
#include "ops/shape.h"

namespace lucid::ops {

namespace {

std::string shapes_of(const Tensor& a, const Tensor& b) {
  return shape_str(a.shape()) + " and " + shape_str(b.shape());
}

// `x` with `lead` size-1 axes in front (a view on the CPU stream).
Tensor with_leading_ones(const Tensor& x, size_t ndim) {
  if (static_cast<size_t>(x.ndim()) == ndim) return x;
  Shape s(ndim - x.ndim(), 1);
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  return reshape(x, s);
}

Tensor matmul_impl(const char* fn, const Tensor& a, const Tensor& b) {
  common_device(fn, {&a, &b});
  check(a.ndim() >= 1 && b.ndim() >= 1,
        std::string(fn) + "(): both arguments must be at least 1-D, got shapes " + shapes_of(a, b));
  DType dt = promote_types(a.dtype(), b.dtype());
  check<TypeError>(dt != DType::Bool, std::string(fn) + "(): boolean tensors are not supported; convert with .int()");
  bool a_vec = a.ndim() == 1, b_vec = b.ndim() == 1;
  Tensor a2 = a_vec ? reshape(a, {1, a.shape()[0]}) : a;
  Tensor b2 = b_vec ? reshape(b, {b.shape()[0], 1}) : b;
  int64_t k = a2.shape()[a2.ndim() - 1];
  check(k == b2.shape()[b2.ndim() - 2],
        std::string(fn) + "(): shapes " + shapes_of(a, b) + " are not aligned: 'input' has " + std::to_string(k) +
            " columns but 'other' has " + std::to_string(b2.shape()[b2.ndim() - 2]) + " rows");
  Shape batch_a(a2.shape().begin(), a2.shape().end() - 2), batch_b(b2.shape().begin(), b2.shape().end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes(batch_a, batch_b, fn);
  } catch (const ValueError&) {
    throw ValueError(std::string(fn) + "(): batch dimensions of shapes " + shapes_of(a, b) +
                     " cannot be broadcast together");
  }
  size_t nd = batch.size() + 2;
  a2 = with_leading_ones(a2, nd);
  b2 = with_leading_ones(b2, nd);
  // Work dtype: halves widen to float32 (both streams round once at the end).
  bool half = dt == DType::Float16 || dt == DType::BFloat16;
  DType work = half ? DType::Float32 : dt;
  if (a2.dtype() != work) a2 = astype(a2, work);
  if (b2.dtype() != work) b2 = astype(b2, work);
  int64_t m = a2.shape()[nd - 2], n = b2.shape()[nd - 1];
  Tensor out;
  if (a.device() == Device::GPU) {
    out = gpu::matmul(a2, b2);
    if (out.dtype() != dt) out = astype(out, dt);
  } else {
    // Broadcast batch axes by stride-0 views (no copies) for the kernel.
    Shape full_a = batch, full_b = batch;
    full_a.insert(full_a.end(), {m, k});
    full_b.insert(full_b.end(), {k, n});
    Tensor av = expand(a2, full_a), bv = expand(b2, full_b);
    Shape out_shape = batch;
    out_shape.insert(out_shape.end(), {m, n});
    out = Tensor::empty_cpu(out_shape, work);
    cpu::matmul(av, bv, out);
    if (work != dt) out = astype(out, dt);
  }
  Shape final_shape = batch;
  if (!a_vec) final_shape.push_back(m);
  if (!b_vec) final_shape.push_back(n);
  return final_shape == out.shape() ? out : reshape(out, final_shape);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) { return matmul_impl("matmul", a, b); }

Tensor mm(const Tensor& a, const Tensor& b) {
  check(a.ndim() == 2 && b.ndim() == 2, "mm(): expected 2-D tensors, got shapes " + shapes_of(a, b));
  return matmul_impl("mm", a, b);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  check(a.ndim() == 3 && b.ndim() == 3 && a.shape()[0] == b.shape()[0],
        "bmm(): expected 3-D tensors with one batch size, got shapes " + shapes_of(a, b));
  return matmul_impl("bmm", a, b);
}

}  // namespace lucid::ops
