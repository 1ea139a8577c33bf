// matmul / mm / bmm run and recorded in C++ (node.h): `_C.autograd_matmul(a,
// b, kind)` runs the `ops::` product ("matmul", "mm" or "bmm") and, when grad
// mode is on and an operand requires grad, attaches MatmulBackward saving
// (a, b). Its first-order backward is here, against `ops::` (dA = g @ B^T,
// dB = A^T @ g with 1-D operands lifted to matrices, each summed over the
// batch axes its operand was broadcast along); under create_graph the walk
// calls lucid/_ops/linalg.py's `_Matmul`.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_linalg(pybind11::module_& m);

}  // namespace lucid::autograd
