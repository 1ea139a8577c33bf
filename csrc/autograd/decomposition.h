// The matrix decompositions and solvers (lucid.linalg's inv, solve, det,
// cholesky, eigvalsh, svdvals, solve_triangular; below, those of several
// results) run and recorded
// in C++ (node.h): `_C.autograd_<op>(...)` runs the `ops::` routine
// (ops/decomposition.h, which checks the arguments and raises every error)
// and, when grad mode is on and an input requires grad, attaches the op's
// node (InvBackward, SolveBackward, DetBackward, CholeskyBackward,
// EigvalshBackward, SvdvalsBackward, SolveTriangularBackward). The
// first-order formulas here do the `ops::` operations of the Python
// Functions' backwards (lucid/linalg/decomposition.py) in their order, so the
// gradients are bit-identical; under create_graph the walk runs those Python
// backwards, which read the node's fields:
//   params: solve (left, vector B), cholesky (upper), eigvalsh (uplo is 'U'),
//           solve_triangular (upper, left, unitriangular), as 0 / 1;
//   input_shape (ctx.in_shape): B's shape for solve and solve_triangular.
// The ones of several results (eigh, slogdet, svd, qr, lu_factor) record a
// node of several outputs here too (`_C.autograd_eigh` ...), whose formula is
// the Python Function's at every order (long closed forms with data-dependent
// checks, dominated by the O(n^3) kernels they call); svd's full_matrices and
// qr's mode are in params, qr's input shape in input_shape.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_decomposition(pybind11::module_& m);

}  // namespace lucid::autograd
