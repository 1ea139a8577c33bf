// The copy family (ops/copy.h): creation, numpy interop, copies, dtype casts
// and device transfers.
#include "bindings/common.h"
#include "core/errors.h"
#include "ops/copy.h"

namespace lucid::bindings {

namespace {

DType dtype_of_numpy(const py::dtype& dt) {
  char kind = dt.kind();
  size_t size = dt.itemsize();
  if (kind == 'b') return DType::Bool;
  if (kind == 'u' && size == 1) return DType::UInt8;
  if (kind == 'i') {
    switch (size) { case 1: return DType::Int8; case 2: return DType::Int16;
                    case 4: return DType::Int32; case 8: return DType::Int64; }
  }
  if (kind == 'f' && size == 2) return DType::Float16;
  if (kind == 'f' && size == 4) return DType::Float32;
  if (kind == 'f' && size == 8) return DType::Float64;
  throw TypeError("from_numpy(): unsupported numpy dtype '" + std::string(py::str(dt)) +
                  "'; expected bool, uint8, int8/16/32/64, float16, float32 or float64");
}

py::dtype numpy_dtype_of(DType t) {
  switch (t) {
    case DType::Bool: return py::dtype("bool");
    case DType::UInt8: return py::dtype("uint8");
    case DType::Int8: return py::dtype("int8");
    case DType::Int16: return py::dtype("int16");
    case DType::Int32: return py::dtype("int32");
    case DType::Int64: return py::dtype("int64");
    case DType::Float16: return py::dtype("float16");
    case DType::BFloat16: return py::dtype("uint16");  // raw bits; Python widens to float32
    case DType::Float32: return py::dtype("float32");
    case DType::Float64: return py::dtype("float64");
  }
  throw TypeError("unsupported dtype");
}

// Shares memory with the numpy array (kept alive by the tensor) when its
// strides are whole, non-negative element multiples; copies otherwise.
Tensor from_numpy(py::array arr) {
  DType dt = dtype_of_numpy(arr.dtype());
  int64_t isz = static_cast<int64_t>(itemsize(dt));
  bool ok = arr.dtype().byteorder() != '>';
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  Strides strides(arr.ndim());
  for (int i = 0; i < arr.ndim(); ++i) {
    if (arr.strides()[i] < 0 || arr.strides()[i] % isz != 0) ok = false;
    strides[i] = arr.strides()[i] / isz;
  }
  if (!ok) {  // reversed, misaligned or byte-swapped: take a native C-ordered copy
    py::object native = arr.attr("astype")(arr.dtype().attr("newbyteorder")("="), py::arg("order") = "C");
    return from_numpy(native.cast<py::array>());
  }
  PyObject* obj = arr.ptr();
  Py_INCREF(obj);
  std::shared_ptr<void> owner(obj, [](void* o) {
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(o));
  });
  return ops::from_buffer(arr.mutable_data(), shape, strides, dt, owner);
}

// A numpy view over a CPU tensor's storage; the capsule keeps it alive.
py::array to_numpy(const Tensor& t) {
  check<TypeError>(t.device() == Device::CPU, "numpy(): tensor is on 'gpu'; call .to('cpu') first");
  auto* keep = new std::shared_ptr<Storage>(t.impl().storage);
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
  size_t isz = itemsize(t.dtype());
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides;
  for (int64_t s : t.strides()) strides.push_back(static_cast<py::ssize_t>(s * isz));
  return py::array(numpy_dtype_of(t.dtype()), shape, strides, t.raw_data(), base);
}

}  // namespace

void init_copy(py::module_& m) {
  m.def("from_numpy", &from_numpy, py::arg("array"));
  m.def("to_numpy", &to_numpy, py::arg("tensor"));
  m.def("empty", [](const Shape& s, const std::string& dt, const std::string& dev) {
    return ops::empty(s, dtype_arg(dt), device_arg(dev));
  });
  m.def("full", [](const Shape& s, double v, const std::string& dt, const std::string& dev) {
    return ops::full(s, v, dtype_arg(dt), device_arg(dev));
  });
  m.def("contiguous", &ops::contiguous);
  m.def("astype", [](const Tensor& t, const std::string& dt) { return ops::astype(t, dtype_arg(dt)); });
  m.def("to_device", [](const Tensor& t, const std::string& dev) { return ops::to_device(t, device_arg(dev)); });
  m.def("clone", &ops::clone);
  m.def("eval", &ops::eval);
  m.def("copy_", &ops::copy_);
}

}  // namespace lucid::bindings
