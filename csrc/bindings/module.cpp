// lucid._C: the extension module. Bindings convert types and errors only.
#include "bindings/common.h"
#include "core/errors.h"

namespace lucid::bindings {

namespace {

// A Python exception class deriving from `bases`: OpError derives from ValueError and
// RuntimeError, so existing `except ValueError` code keeps working and PyTorch-style
// `except RuntimeError` catches it too; the specific kinds derive from OpError.
PyObject* value_runtime_error(py::module_& m, const char* name, const char* doc, py::object bases) {
  std::string qualified = std::string("lucid.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (!cls) throw py::error_already_set();
  m.attr(name) = py::handle(cls);
  return cls;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "lucid's C++ engine (CPU stream and MLX stream)";
  // Every value an op refuses at the C++ boundary (a shape, a device, an argument's value)
  // is an OpError: one rule, whichever check raised it.
  static PyObject* op_error = value_runtime_error(
      m, "OpError",
      "An op refused its input (a shape, device or argument value it cannot take): a ValueError and a "
      "RuntimeError, as PyTorch raises RuntimeError for these.",
      py::make_tuple(py::handle(PyExc_ValueError), py::handle(PyExc_RuntimeError)));
  py::object op_base = py::make_tuple(py::handle(op_error));
  static PyObject* shape_error = value_runtime_error(
      m, "ShapeError", "Shapes that do not fit (broadcast, reshape / view, expand, matmul, cat): an OpError.",
      op_base);
  static PyObject* device_error = value_runtime_error(
      m, "DeviceError", "Tensors on different devices in one op: an OpError.", op_base);
  static PyObject* linalg_error = value_runtime_error(
      m, "LinAlgError",
      "A matrix a linear-algebra routine cannot take (singular, not positive-definite, no convergence): an "
      "OpError.",
      op_base);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ShapeError& e) {
      PyErr_SetString(shape_error, e.what());
    } catch (const DeviceError& e) {
      PyErr_SetString(device_error, e.what());
    } catch (const LinAlgError& e) {
      PyErr_SetString(linalg_error, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(op_error, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const MemoryError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    }
  });
  init_tensor(m);
  init_copy(m);
  init_elementwise(m);
  init_reduction(m);
  init_shape(m);
  init_indexing(m);
  init_linalg(m);
  init_decomposition(m);
  init_conv(m);
  init_pool(m);
  init_linear(m);
  init_embedding(m);
  init_quantize(m);
  init_fake_quantize_learnable(m);
  init_int4_pack(m);
  init_int4_linear(m);
  init_weight_gemv(m);
  init_qmatmul(m);
  init_qconv2d(m);
  init_qelementwise(m);
  init_group_quant(m);
  init_histogram(m);
  init_special(m);
  init_math(m);
  init_bitwise(m);
  init_scan(m);
  init_sort(m);
  init_recurrent(m);
  init_inplace(m);
  init_autograd(m);
}

}  // namespace lucid::bindings
