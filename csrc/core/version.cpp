#include "core/version.h"

namespace lucid {

namespace {
int64_t& counter(const Tensor& t) {
  TensorImpl& impl = t.impl();
  return impl.storage ? impl.storage->version : impl.gpu_version;
}
}  // namespace

int64_t tensor_version(const Tensor& t) { return counter(t); }
void set_tensor_version(const Tensor& t, int64_t version) { counter(t) = version; }

}  // namespace lucid
