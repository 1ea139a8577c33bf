#include "ops/int4_linear.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/errors.h"
#include "cpu/int4_linear.h"
#include "gpu/int4_linear.h"
#include "gpu/transfer.h"
#include "ops/copy.h"
#include "ops/shape.h"

namespace lucid::ops {

namespace {

std::string arg(const char* name) { return std::string("int4_weight_only_linear(): argument '") + name + "'"; }

Tensor host(const Tensor& t, DType as) {
  Tensor h = t.device() == Device::CPU ? t : to_device(t, Device::CPU);
  return contiguous(h.dtype() == as ? h : astype(h, as));
}

template <class T>
Tensor host_tensor(const std::vector<T>& v, const Shape& shape, DType dt) {
  Tensor t = Tensor::empty_cpu(shape, dt);
  if (!v.empty()) std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(T));
  return t;
}

}  // namespace

Tensor int4_weight_only_linear(const Tensor& x, const Tensor& w_packed, const Tensor& scale,
                               const Tensor& zero_point, int64_t group_size, const std::string& qdtype,
                               const Tensor& bias, bool reference, const std::string& act_dtype) {
  const char* fn = "int4_weight_only_linear";
  common_device(fn, {&x, &w_packed, &scale});
  if (zero_point.defined()) common_device(fn, {&x, &zero_point});
  if (bias.defined()) common_device(fn, {&x, &bias});
  check<TypeError>(x.dtype() == DType::Float32, arg("x") + " must be float32, got " + dtype_name(x.dtype()));
  check(x.ndim() >= 1, arg("x") + " must have shape (..., K), got a 0-d tensor");
  check<TypeError>(w_packed.dtype() == DType::UInt8,
                   arg("w_packed") + " must be uint8 (pack_int4 output), got " + dtype_name(w_packed.dtype()));
  check(w_packed.ndim() == 2, arg("w_packed") + " must have shape (N, K / 2), got " + shape_str(w_packed.shape()));
  bool is_signed;
  if (qdtype == "qint4") is_signed = true;
  else if (qdtype == "quint4") is_signed = false;
  else throw TypeError(arg("qdtype") + " must be qint4 or quint4, got '" + qdtype + "'");
  const bool qd8 = act_dtype == "qint8";
  check(qd8 || act_dtype.empty(), arg("act_dtype") + " must be None (float activations) or 'qint8', got '" +
                                      act_dtype + "'");
  const int64_t K = x.shape().back(), N = w_packed.size(0);
  check(group_size > 0 && group_size % 32 == 0,
        arg("group_size") + " must be a positive multiple of 32 (32, 64, 128, ...), got " + std::to_string(group_size));
  check(K % group_size == 0, arg("group_size") + " (" + std::to_string(group_size) + ") must divide K = " +
                                 std::to_string(K) + " (the last dimension of 'x')");
  check(w_packed.size(1) * 2 == K, std::string(fn) + "(): shapes do not match: 'x' " + shape_str(x.shape()) +
                                       " has K = " + std::to_string(K) + " but 'w_packed' " +
                                       shape_str(w_packed.shape()) + " holds " + std::to_string(2 * w_packed.size(1)) +
                                       " codes per row; expected w_packed of shape (N, " + std::to_string(K / 2) + ")");
  check(!qd8 || group_size <= (int64_t{1} << 20),
        arg("group_size") + " must be at most 2^20 with act_dtype='qint8' (int32 group dots), got " +
            std::to_string(group_size));
  const int64_t groups = K / group_size;
  const Shape pshape{N, groups};
  check<TypeError>(is_floating(scale.dtype()), arg("scale") + " must be a floating tensor, got " + dtype_name(scale.dtype()));
  check(scale.shape() == pshape, arg("scale") + " must have shape " + shape_str(pshape) +
                                     " (N, K / group_size), got " + shape_str(scale.shape()));
  Tensor hs = host(scale, DType::Float32);
  const float* s = hs.data<float>();
  auto scale_error = [&](int64_t i) {
    return ValueError(arg("scale") + " must be finite and > 0, got " + std::to_string(s[i]) + " at flat index " +
                      std::to_string(i));
  };
  auto check_scales = [&] {
    if (int64_t i = cpu::first_bad_scale(s, N * groups); i >= 0) throw scale_error(i);
  };
  int64_t M = 1;  // rows of x: the product of its leading dimensions (K may be 0)
  for (int i = 0; i + 1 < x.ndim(); ++i) M *= x.size(i);
  // The CPU qd8 kernels check the scales as they read them (one pass over
  // memory instead of two; cpu/int4_linear.h); every other path checks here.
  // A later argument error still reports a bad scale first, as before.
  const bool scales_in_kernel = x.device() == Device::CPU && qd8 && M > 0 && N > 0;
  if (!scales_in_kernel) check_scales();
  const int64_t qmin = is_signed ? -8 : 0, qmax = is_signed ? 7 : 15;
  std::vector<int32_t> z;  // empty: no zero points (all 0)
  Tensor hb;
  try {
    if (zero_point.defined()) {
      z.resize(static_cast<size_t>(N * groups));
      check<TypeError>(is_integral(zero_point.dtype()),
                       arg("zero_point") + " must be an integer tensor, got " + dtype_name(zero_point.dtype()));
      check(zero_point.shape() == pshape, arg("zero_point") + " must have shape " + shape_str(pshape) +
                                              " (N, K / group_size), got " + shape_str(zero_point.shape()));
      Tensor hz = host(zero_point, DType::Int64);
      for (int64_t i = 0; i < N * groups; ++i) {
        int64_t v = hz.data<int64_t>()[i];
        if (v < qmin || v > qmax)
          throw ValueError(arg("zero_point") + " must lie in [" + std::to_string(qmin) + ", " + std::to_string(qmax) +
                           "] (" + qdtype + "), got " + std::to_string(v) + " at flat index " + std::to_string(i));
        z[i] = static_cast<int32_t>(v);
      }
    } else if (!is_signed) {
      // quint4 without zero points would be all-positive weights; make it explicit.
      throw ValueError(arg("zero_point") + " is required for quint4 weights");
    }
    if (bias.defined()) {
      check<TypeError>(is_floating(bias.dtype()), arg("bias") + " must be a floating tensor, got " + dtype_name(bias.dtype()));
      check(bias.ndim() == 1 && bias.size(0) == N,
            arg("bias") + " must have shape (" + std::to_string(N) + ",), got " + shape_str(bias.shape()));
      hb = host(bias, DType::Float32);
    }
  } catch (...) {
    if (scales_in_kernel) check_scales();
    throw;
  }
  Shape out_shape = x.shape();
  out_shape.back() = N;
  if (x.device() == Device::GPU) {
    check(!reference, std::string(fn) + "(): the reference kernel runs on the CPU stream only");
    std::vector<float> sv(s, s + N * groups);
    Tensor gs = gpu::upload(host_tensor(sv, pshape, DType::Float32));
    if (z.empty()) z.assign(static_cast<size_t>(N * groups), 0);
    Tensor gz = gpu::upload(host_tensor(z, pshape, DType::Int32));
    if (qd8)
      return gpu::int4_weight_only_linear_qd8(x, w_packed, gs, gz, group_size, is_signed,
                                              bias.defined() ? gpu::upload(hb) : Tensor(), out_shape);
    return gpu::int4_weight_only_linear(x, w_packed, gs, gz, group_size, is_signed,
                                        bias.defined() ? gpu::upload(hb) : Tensor(), out_shape);
  }
  // qint4 nibbles flipped by 8 become unsigned; z' = z + 8 keeps q - z exact.
  // Without zero points the kernels take no array (every z' is 8, a qint4
  // grid): nothing of N x K / G to fill per call.
  std::vector<int32_t> zq(z);
  if (is_signed)
    for (auto& v : zq) v += 8;
  Tensor xc = contiguous(reshape(x, {M, K}));
  Tensor wc = contiguous(w_packed);
  Tensor out = Tensor::empty_cpu({M, N}, DType::Float32);
  if (scales_in_kernel) {
    int64_t bad = cpu::int4_weight_only_linear_qd8(xc, wc, s, zq.empty() ? nullptr : zq.data(), is_signed ? 0x88 : 0,
                                                   group_size, bias.defined() ? hb.data<float>() : nullptr, out,
                                                   reference);
    if (bad >= 0) throw scale_error(bad);
  } else if (M > 0 && N > 0)
    cpu::int4_weight_only_linear(xc, wc, s, zq.empty() ? nullptr : zq.data(), is_signed ? 0x88 : 0, group_size,
                                 bias.defined() ? hb.data<float>() : nullptr, out, reference);
  return reshape(out, out_shape);
}

}  // namespace lucid::ops
