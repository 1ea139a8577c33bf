// The tensor type, Python numbers as tensors, dtype promotion, threads and the
// GPU stream's device.
#include "bindings/common.h"
#include "core/thread_pool.h"
#include "gpu/device_info.h"
#include "ops/scalar.h"

namespace lucid::bindings {

void init_tensor(py::module_& m) {
  autograd::init_tensor_type(m);  // TensorBase: the tensor object (autograd/tensor_object.h)
  // A Python number next to tensor `like` as a 0-d tensor (ops/scalar.h), or
  // None when `value` is not a real number (lucid/_ops/common.py: as_tensor).
  m.def("scalar_tensor", [](py::handle value, const Tensor& like) -> py::object {
    std::optional<Tensor> t = autograd::number_as_tensor(value.ptr(), like);
    return t ? py::cast(*t) : py::none();
  });
  m.def("promote_types", [](const std::string& a, const std::string& b) {
    return std::string(dtype_name(promote_types(dtype_arg(a), dtype_arg(b))));
  });

  m.def("set_num_threads", &set_num_threads, py::arg("n"));
  m.def("get_num_threads", &get_num_threads);
  m.def("max_num_threads", &max_num_threads);
  m.def("gpu_is_available", &gpu::is_available);
  m.def("gpu_backend", []() { return std::string(gpu::backend()); });
}

}  // namespace lucid::bindings
