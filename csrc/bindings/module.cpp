// lucid._C: the extension module. Bindings convert types and errors only.
#include "bindings/common.h"
#include "core/errors.h"

namespace lucid::bindings {

void init_inplace(py::module_& m);  // bindings/inplace.cpp

PYBIND11_MODULE(_C, m) {
  m.doc() = "lucid's C++ engine (CPU stream and MLX stream)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
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
  init_elementwise(m);
  init_reduction(m);
  init_shape(m);
  init_linalg(m);
  init_nn(m);
  init_quantization(m);
  init_histogram(m);
  init_inplace(m);
}

}  // namespace lucid::bindings
