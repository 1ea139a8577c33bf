// add, sub, mul, div and pow recorded in C++: a no-grad op records nothing
// and costs one C++ call.
//
// `arith(op, x, y)` is the whole op: it coerces a Python number next to a
// tensor (ops::scalar_tensor, PyTorch's weak scalars), runs the `ops::`
// kernel, and, when grad mode is on and an input requires grad, attaches a
// node as the result's grad_fn. It serves the operators (TensorBase's
// number slots: `a + b`, `2.0 * x`, `x / y`) and lucid.add / sub / mul / div
// (`_C.autograd_add` ...; pow only as `_C.autograd_pow`, which lucid.pow calls
// after its integer-exponent check).
//
// The node is a CppNode (node.h: AddBackward ...) whose first-order backward
// is here, against `ops::`; under create_graph it calls
// the op's Python Function (`_Add.backward` ... in lucid/_ops/elementwise.py),
// whose formula is recorded lucid ops. Both compute the same operations in the
// same order.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

namespace py = pybind11;

enum class Arith { Add, Sub, Mul, Div, Pow };

// `x op y`; a new reference, or NULL with a Python error set. A value that is
// neither a tensor nor a real number goes to the Python coercion registered
// by lucid/_ops/elementwise.py (lists, arrays), as lucid.add does.
PyObject* arith(Arith op, PyObject* x, PyObject* y);

// The number slots TensorBase gets (nb_add, nb_subtract, nb_multiply,
// nb_true_divide).
PyNumberMethods* arith_number_methods();

// Adds `autograd_add` / `_sub` / `_mul` / `_div` and
// `_register_arithmetic` to `m`.
void init_arithmetic(py::module_& m);

}  // namespace lucid::autograd
