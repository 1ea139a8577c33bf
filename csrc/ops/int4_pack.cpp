#include "ops/int4_pack.h"

#include <string>

#include "core/errors.h"
#include "cpu/int4_pack.h"
#include "gpu/int4_pack.h"
#include "ops/copy.h"
#include "ops/nn_common.h"
#include "ops/qparams.h"

namespace lucid::ops {

using quant_detail::arg;

namespace {
void split_axis(const Shape& s, int a, int64_t& outer, int64_t& len, int64_t& inner) {
  outer = 1, inner = 1, len = s[a];
  for (int i = 0; i < a; ++i) outer *= s[i];
  for (size_t i = a + 1; i < s.size(); ++i) inner *= s[i];
}
int int4_axis(const char* fn, const Tensor& t, int64_t axis) {
  int nd = t.ndim();
  check(nd > 0, arg(fn, t.dtype() == DType::UInt8 && std::string(fn) == "unpack_int4" ? "packed" : "codes") +
                    " must have at least one dimension, got a 0-d tensor");
  check(axis >= -nd && axis < nd, arg(fn, "axis") + " is out of range for a " + std::to_string(nd) +
                                      "-d input: expected an axis in [" + std::to_string(-nd) + ", " +
                                      std::to_string(nd - 1) + "], got " + std::to_string(axis));
  return static_cast<int>(axis < 0 ? axis + nd : axis);
}
}  // namespace

Tensor pack_int4(const Tensor& codes, int64_t axis) {
  const char* fn = "pack_int4";
  common_device(fn, {&codes});
  check<TypeError>(codes.dtype() == DType::Int8 || codes.dtype() == DType::UInt8,
                   arg(fn, "codes") + " must hold int8 (qint4) or uint8 (quint4) codes, got " + dtype_name(codes.dtype()));
  int a = int4_axis(fn, codes, axis);
  int64_t outer, len, inner;
  split_axis(codes.shape(), a, outer, len, inner);
  Shape out_shape = codes.shape();
  out_shape[a] = (len + 1) / 2;
  if (codes.device() == Device::GPU) return gpu::pack_int4(codes, outer, len, inner, out_shape);
  Tensor c = contiguous(codes);
  Tensor out = Tensor::empty_cpu(out_shape, DType::UInt8);
  cpu::pack_int4(c, out, outer, len, inner);
  return out;
}

Tensor unpack_int4(const Tensor& packed, int64_t length, bool is_signed, int64_t axis) {
  const char* fn = "unpack_int4";
  common_device(fn, {&packed});
  check<TypeError>(packed.dtype() == DType::UInt8,
                   arg(fn, "packed") + " must be a uint8 tensor from pack_int4, got " + dtype_name(packed.dtype()));
  int a = int4_axis(fn, packed, axis);
  int64_t outer, half, inner;
  split_axis(packed.shape(), a, outer, half, inner);
  check(length >= 0 && (length + 1) / 2 == half,
        arg(fn, "length") + " must be " + std::to_string(2 * half - 1) + " or " + std::to_string(2 * half) +
            " for " + std::to_string(half) + " packed bytes along axis " + std::to_string(a) + ", got " +
            std::to_string(length));
  Shape out_shape = packed.shape();
  out_shape[a] = length;
  DType dt = is_signed ? DType::Int8 : DType::UInt8;
  if (packed.device() == Device::GPU) return gpu::unpack_int4(packed, outer, length, inner, dt, out_shape);
  Tensor p = contiguous(packed);
  Tensor out = Tensor::empty_cpu(out_shape, dt);
  cpu::unpack_int4(p, out, outer, length, inner);
  return out;
}

}  // namespace lucid::ops
