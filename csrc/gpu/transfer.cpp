#include "gpu/transfer.h"

#include <cstring>

#include "core/errors.h"
#include "gpu/array.h"
#include "gpu/copy.h"

namespace lucid::gpu {

Tensor upload(const Tensor& src) {
  // src is contiguous (ops layer guarantees it). MLX copies the buffer.
  mx::Shape shape = to_mx_shape(src.shape());
  mx::Dtype dt = to_mx(src.dtype());
  mx::array a = mx::zeros(shape, dt, mx::Device(mx::Device::cpu));
  a.eval();
  if (src.numel() > 0) std::memcpy(a.data<void>(), src.raw_data(), src.numel() * itemsize(src.dtype()));
  // The array lives in unified/host memory; moving it to the stream's device
  // is a no-op copy on Apple silicon and an upload under CUDA.
  return wrap(mx::copy(a, stream()));
}

Tensor download(const Tensor& t) {
  mx::array a = mx::contiguous(array_of(t), false, stream());
  a.eval();
  Tensor out = Tensor::empty_cpu(t.shape(), t.dtype());
  if (out.numel() > 0) std::memcpy(out.raw_data(), a.data<void>(), out.numel() * itemsize(t.dtype()));
  return out;
}

void eval(const Tensor& t) { mx::eval(array_of(t)); }

void assign(const Tensor& dst, const Tensor& src) {
  auto s = stream();
  mx::array v = array_of(astype(src, dst.dtype()));
  rebind(dst, mx::broadcast_to(v, to_mx_shape(dst.shape()), s));
}

}  // namespace lucid::gpu
