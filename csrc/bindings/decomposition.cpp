#include "bindings/common.h"
#include "ops/decomposition.h"

namespace lucid::bindings {

void init_decomposition(py::module_& m) {
  m.def("inv", &ops::inv);
  m.def("lu_factor", &ops::lu_factor);
  m.def("solve", &ops::solve);
  m.def("det", &ops::det);
  m.def("slogdet", &ops::slogdet);
  m.def("cholesky", &ops::cholesky);
  m.def("eigh", [](const Tensor& a, const std::string& uplo, bool vectors) -> py::object {
    auto [w, v] = ops::eigh(a, uplo, vectors);
    return vectors ? py::cast(std::make_pair(w, v)) : py::cast(w);
  });  // (w, v), or w alone without vectors
  m.def("svd", &ops::svd);    // (a, full_matrices, uv) -> [U, S, Vh] or [S]
  m.def("qr", &ops::qr);
  m.def("solve_triangular", &ops::solve_triangular);
}

}  // namespace lucid::bindings
