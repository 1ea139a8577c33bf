// maximum, minimum, where, clamp, gelu, softplus, atan2, floor_divide,
// remainder, fmod and hypot, logaddexp, logaddexp2, xlogy, copysign, fmax,
// fmin recorded in C++.
//
// Each `_C.autograd_<op>` is the whole op: it runs the `ops::` kernel and,
// when grad mode is on, an input requires grad and the result is floating
// point (what Function.apply recorded), attaches a CppNode (node.h) as the
// result's grad_fn. The node's first-order backward is here, against `ops::`;
// under create_graph the walk calls the op's Python Function (`_MaxMin`,
// `_Where`, `_Clamp`, `_Gelu`, `_FloorDivide`, `_Remainder` in
// lucid/_ops/elementwise.py, `_Atan2` in lucid/_ops/special.py, `_Softplus` in
// lucid/nn/functional/activation.py, `_MathBinary` in lucid/_ops/elementwise.py for
// hypot ... fmin, which also saves the result), whose formula
// is recorded lucid ops: the same operations in the same order, so both give
// the same bits.
//
// What each entry takes (the Python wrappers keep the rest of their argument
// handling and messages):
//   autograd_maximum / _minimum / _atan2 / _floor_divide / _remainder / _fmod
//     / _hypot / _logaddexp / _logaddexp2 / _xlogy / _copysign / _fmax / _fmin
//     (input, other): tensors or a tensor and a number (PyTorch's weak scalar),
//     anything else through `_binary_args` (lists; its TypeErrors);
//   autograd_where(condition, input, other): three tensors; the node's inputs
//     are (input, other, condition), so its two gradients are the first two;
//   autograd_clamp(input, min, max): bounds None, tensors or numbers (others
//     through `as_tensor`); ValueError when both are None;
//   autograd_gelu(input, approximate): approximate a str ("none" / "tanh",
//     checked by ops::gelu);
//   autograd_softplus(input, beta, threshold): a floating tensor and two
//     floats, checked by lucid.nn.functional.softplus; the node keeps them
//     in `scalars` (ctx.scalars).
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

namespace py = pybind11;

// Adds the `autograd_*` entries above and `_register_elementwise` to `m`.
void init_elementwise_autograd(py::module_& m);

}  // namespace lucid::autograd
