"""Trigonometric and hyperbolic functions beyond sin / cos / tanh (those are in
elementwise.py) with PyTorch's names, their gradients, and their in-place forms:

* unary kernels (csrc/ops/math.cpp): ``tan sinh cosh asin acos atan asinh
  acosh atanh`` and the normalized ``sinc``; integers promote to float32; the
  numpy spellings ``arcsin arccos arctan arcsinh arccosh arctanh`` are the same
  functions;
* binary kernels: ``hypot`` (csrc/ops/math.cpp) and ``atan2`` /
  ``arctan2`` (csrc/ops/special.cpp).

Definitions, edge values and per-stream accuracy: docs/numerics.md, "Extra
elementwise math". Gradients are written with lucid ops (twice differentiable).
"""
from __future__ import annotations

import math

from .. import _C
from .._tensor import Tensor
from ..autograd import Function
from . import elementwise as E
from .common import as_tensor, sum_to_shape
from .elementwise import _DERIVATIVE, _GRADIENT, math_binary, math_unary
from .inplace import inplace_form

_UNARY = ["tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "sinc"]
_UNARY_ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
                  "arctanh": "atanh"}
_INPLACE = [n + "_" for n in _UNARY] + [n + "_" for n in _UNARY_ALIASES] + ["hypot_"]

__all__ = _UNARY + list(_UNARY_ALIASES) + ["hypot", "atan2", "arctan2"] + _INPLACE
TENSOR_METHODS = list(__all__)


# ----- unary kernels -------------------------------------------------------------------------

def _sinc_grad(g, x, y):
    # d/dx sin(pi x) / (pi x) = (cos(pi x) - sinc(x)) / x, and 0 at x = 0 (an even function)
    zero = E.eq(x, 0)
    safe = E.where(zero, 1.0, x)
    return E.where(zero, 0.0, E.mul(g, E.div(E.sub(E.cos(E.mul(x, math.pi)), y), safe)))


# The unary node's formulas (TanBackward, AsinBackward, ...). These ops run and
# record in C++ (`_C.autograd_unary`, csrc/autograd/unary.h), whose first-order
# backward is each formula against ops::, the same operations in the same order;
# `_Unary.backward` reads them under create_graph.
_DERIVATIVE.update({
    "tan": lambda x, y: E.add(E.mul(y, y), 1.0),
    "sinh": lambda x, y: cosh(x),
    "cosh": lambda x, y: sinh(x),
})
_GRADIENT.update({
    "asin": lambda g, x, y: E.div(g, E.sqrt(E.sub(1.0, E.mul(x, x)))),
    "acos": lambda g, x, y: E.neg(E.div(g, E.sqrt(E.sub(1.0, E.mul(x, x))))),
    "atan": lambda g, x, y: E.div(g, E.add(E.mul(x, x), 1.0)),
    "asinh": lambda g, x, y: E.div(g, E.sqrt(E.add(E.mul(x, x), 1.0))),
    "acosh": lambda g, x, y: E.div(g, E.sqrt(E.sub(E.mul(x, x), 1.0))),
    "atanh": lambda g, x, y: E.div(g, E.sub(1.0, E.mul(x, x))),
    "sinc": _sinc_grad,
})

tan = math_unary("tan", "Tangent (radians); integers promote to float32.")
sinh = math_unary("sinh", "Hyperbolic sine.")
cosh = math_unary("cosh", "Hyperbolic cosine.")
asin = math_unary("asin", "Inverse sine in [-pi/2, pi/2]; NaN outside [-1, 1]. ``arcsin`` is the same.")
acos = math_unary("acos", "Inverse cosine in [0, pi]; NaN outside [-1, 1]. ``arccos`` is the same.")
atan = math_unary("atan", "Inverse tangent in (-pi/2, pi/2). ``arctan`` is the same.")
asinh = math_unary("asinh", "Inverse hyperbolic sine. ``arcsinh`` is the same.")
acosh = math_unary("acosh", "Inverse hyperbolic cosine; NaN below 1. ``arccosh`` is the same.")
atanh = math_unary("atanh", "Inverse hyperbolic tangent; +-inf at +-1, NaN outside. ``arctanh`` is the same.")
sinc = math_unary("sinc", """Normalized sinc ``sin(pi x) / (pi x)``, 1 at 0.

>>> import lucid
>>> lucid.sinc(lucid.tensor([0.0, 0.5])).tolist()[0]
1.0
""")

arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh


# ----- binary kernels ------------------------------------------------------------------------

_autograd_hypot = math_binary("hypot", lambda g, a, b, y: (E.div(E.mul(g, a), y), E.div(E.mul(g, b), y)))


def hypot(input, other):
    """``sqrt(input**2 + other**2)`` without overflow; +inf if either is infinite.

    >>> import lucid
    >>> lucid.hypot(lucid.tensor([3.0]), lucid.tensor([4.0])).tolist()
    [5.0]
    """
    return _autograd_hypot(input, other)  # coercion, kernel and (when recording) the node: one C++ call


class _Atan2(Function):
    @staticmethod
    def forward(ctx, y, x):
        ctx.save_for_backward(y, x)
        return _C.atan2(y._impl, x._impl)

    @staticmethod
    def backward(ctx, g):
        y, x = ctx.saved_tensors
        r2 = x * x + y * y
        gy = gx = None
        if ctx.needs_input_grad[0]:
            gy = sum_to_shape(g * x / r2, y.shape)
        if ctx.needs_input_grad[1]:
            gx = sum_to_shape(-g * y / r2, x.shape)
        return gy, gx


def atan2(input, other):
    """The angle of the point ``(other, input)``: ``atan2(y=input, x=other)`` in
    ``[-pi, pi]``; broadcasts; numbers are accepted for either side.

    >>> import lucid
    >>> round(lucid.atan2(lucid.tensor([1.0]), lucid.tensor([-1.0])).item(), 6)
    2.356194
    """
    if not isinstance(input, Tensor):
        input = as_tensor(input, other, "input")
    other = as_tensor(other, input, "other")
    return _C.autograd_atan2(input, other)  # kernel and (when needed) the node, csrc/autograd/elementwise.h


_C._register_elementwise("atan2", _Atan2)  # its formula serves create_graph


arctan2 = atan2

for _name in _INPLACE:
    globals()[_name] = inplace_form(_name, globals()[_name[:-1]])
del _name
