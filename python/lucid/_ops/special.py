"""Accurate elementwise functions (csrc/ops/special.cpp): log1p, expm1,
log2, atan2, with gradients. Integer inputs promote to float32. Accuracy per
stream: docs/numerics.md, "Accurate elementwise functions"."""
from __future__ import annotations

import math

from .. import _C
from .._tensor import Tensor
from ..autograd import Function
from .common import as_tensor, sum_to_shape
from .elementwise import _GRADIENT

__all__ = ["log1p", "expm1", "log2", "atan2", "arctan2"]
TENSOR_METHODS = ["log1p", "expm1", "log2", "atan2", "arctan2"]

_LN2 = math.log(2.0)


# The unary node's whole-gradient formulas (Log1pBackward, Expm1Backward,
# Log2Backward). The ops run and record in C++ (`_C.autograd_unary`,
# csrc/autograd/unary.h: the same formulas against ops::); `_Unary.backward`
# reads these under create_graph.
_GRADIENT.update({
    "log1p": lambda g, x, y: g / (x + 1.0),
    "expm1": lambda g, x, y: g * (y + 1.0),
    "log2": lambda g, x, y: g / (x * _LN2),
})


def _special(name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be a tensor, got {type(x).__name__}")
    return _C.autograd_unary(x, name)  # the kernel and (when x requires grad) the node: one C++ call


def log1p(input):
    """``ln(1 + x)``, accurate for small ``x``.

    >>> import lucid
    >>> abs(lucid.log1p(lucid.tensor([1e-10])).item() - 1e-10) < 1e-16  # log(1 + 1e-10) in float32 gives 0
    True
    """
    return _special("log1p", input)


def expm1(input):
    """``e^x - 1``, accurate for small ``x``."""
    return _special("expm1", input)


def log2(input):
    """Base-2 logarithm."""
    return _special("log2", input)


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
