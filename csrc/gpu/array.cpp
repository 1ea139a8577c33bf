#include "gpu/array.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/errors.h"

namespace lucid::gpu {

namespace {
bool mlx_cpu_requested() {
  const char* v = std::getenv("LUCID_MLX_DEVICE");
  return v && std::string(v) == "cpu";
}
}  // namespace

bool is_available() {
  if (mlx_cpu_requested()) return true;
  return mx::is_available(mx::Device(mx::Device::gpu));
}

mx::Device device() {
  if (mlx_cpu_requested()) return mx::Device(mx::Device::cpu);
  mx::Device d(mx::Device::gpu);
  if (!mx::is_available(d))
    throw RuntimeError(
        "device 'gpu': no GPU is available to MLX on this host; set LUCID_MLX_DEVICE=cpu to run the GPU "
        "stream on MLX's CPU backend");
  return d;
}

mx::StreamOrDevice stream() { return device(); }

const char* backend() {
  if (mlx_cpu_requested() || !mx::is_available(mx::Device(mx::Device::gpu))) return "mlx-cpu";
#if defined(__APPLE__)
  return "metal";
#else
  return "cuda";
#endif
}

mx::Dtype to_mx(DType t) {
  switch (t) {
    case DType::Bool: return mx::bool_;
    case DType::UInt8: return mx::uint8;
    case DType::Int8: return mx::int8;
    case DType::Int16: return mx::int16;
    case DType::Int32: return mx::int32;
    case DType::Int64: return mx::int64;
    case DType::Float16: return mx::float16;
    case DType::BFloat16: return mx::bfloat16;
    case DType::Float32: return mx::float32;
    case DType::Float64:
      throw TypeError("float64 is not supported on the GPU stream (MLX GPUs have no float64); "
                      "convert with .to(lucid.float32) first");
  }
  throw TypeError("unsupported dtype");
}

DType from_mx(mx::Dtype t) {
  if (t == mx::bool_) return DType::Bool;
  if (t == mx::uint8) return DType::UInt8;
  if (t == mx::int8) return DType::Int8;
  if (t == mx::int16) return DType::Int16;
  if (t == mx::int32) return DType::Int32;
  if (t == mx::int64) return DType::Int64;
  if (t == mx::float16) return DType::Float16;
  if (t == mx::bfloat16) return DType::BFloat16;
  if (t == mx::float32) return DType::Float32;
  throw TypeError("MLX produced a dtype lucid does not support");
}

mx::Shape to_mx_shape(const Shape& s) {
  mx::Shape out;
  for (int64_t d : s) {
    check<ValueError>(d <= INT32_MAX, "dimension " + std::to_string(d) + " too large for the GPU stream");
    out.push_back(static_cast<int32_t>(d));
  }
  return out;
}

const mx::array& array_of(const Tensor& t) {
  check<RuntimeError>(t.defined() && t.device() == Device::GPU && t.impl().gpu,
                      "internal: expected a GPU tensor");
  return t.impl().gpu->array;
}

mx::array matmul_checked(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  if (a.size() != 0 && b.size() != 0) return mx::matmul(a, b, s);
  // Broadcast batch axes, then (m, n); the sum over an empty K is 0.
  int na = a.ndim(), nb = b.ndim(), nbatch = std::max(na, nb) - 2;
  mx::Shape out(static_cast<size_t>(nbatch + 2));
  for (int d = 0; d < nbatch; ++d) {
    int da = d - (nbatch - (na - 2)), db = d - (nbatch - (nb - 2));
    int xa = da >= 0 ? a.shape(da) : 1, xb = db >= 0 ? b.shape(db) : 1;
    out[d] = xa == 1 ? xb : xa;
  }
  out[nbatch] = a.shape(na - 2);
  out[nbatch + 1] = b.shape(nb - 1);
  return mx::zeros(out, mx::promote_types(a.dtype(), b.dtype()), s);
}

Tensor wrap(mx::array a) {
  Shape shape(a.shape().begin(), a.shape().end());
  check_allocatable(checked_nbytes(shape, from_mx(a.dtype()), "gpu"),
                    "out of memory on the GPU stream: a result of shape " + shape_str(shape));
  return wrap_view(std::move(a));
}

Tensor wrap_view(mx::array a) {
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = from_mx(a.dtype());
  impl->device = Device::GPU;
  for (auto d : a.shape()) impl->shape.push_back(d);
  impl->gpu = std::make_shared<GpuArray>(GpuArray{std::move(a)});
  return Tensor(impl);
}

void rebind(const Tensor& t, mx::array a) {
  auto& impl = t.impl();
  impl.dtype = from_mx(a.dtype());
  impl.shape.assign(a.shape().begin(), a.shape().end());
  impl.gpu = std::make_shared<GpuArray>(GpuArray{std::move(a)});
}

}  // namespace lucid::gpu
