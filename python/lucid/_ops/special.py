"""Exponentials, logarithms and error functions beyond exp / log / erf (those are
in elementwise.py), with their gradients and in-place forms:

* accurate near zero or for small steps (csrc/ops/special.cpp): ``log1p``,
  ``expm1``, ``log2``;
* unary kernels (csrc/ops/math.cpp): ``exp2 log10 erfc erfinv``;
* binary kernels: ``logaddexp logaddexp2 xlogy``;
* composed here: ``logit``.

Integer inputs promote to float32. Definitions, edge values and per-stream
accuracy: docs/numerics.md, "Accurate elementwise functions" and "Extra
elementwise math". Gradients are written with lucid ops (twice differentiable).
"""
from __future__ import annotations

import math

from .. import _C
from .._tensor import Tensor
from . import elementwise as E
from .elementwise import _DERIVATIVE, _GRADIENT, math_binary, math_unary
from .inplace import inplace_form

_INPLACE = ["exp2_", "log10_", "erfc_", "erfinv_", "xlogy_", "logit_"]
__all__ = ["log1p", "expm1", "log2", "exp2", "log10", "erfc", "erfinv", "logaddexp", "logaddexp2", "xlogy",
           "logit"] + _INPLACE
TENSOR_METHODS = list(__all__)

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0


# The unary node's whole-gradient formulas (Log1pBackward, Expm1Backward,
# Log2Backward). The ops run and record in C++ (`_C.autograd_unary`,
# csrc/autograd/unary.h: the same formulas against ops::); `_Unary.backward`
# reads these under create_graph.
_GRADIENT.update({
    "log1p": lambda g, x, y: g / (x + 1.0),
    "expm1": lambda g, x, y: g * (y + 1.0),
    "log2": lambda g, x, y: g / (x * _LN2),
    "log10": lambda g, x, y: E.div(g, E.mul(x, _LN10)),
})
_DERIVATIVE.update({
    "exp2": lambda x, y: E.mul(y, _LN2),
    "erfc": lambda x, y: E.mul(-_TWO_OVER_SQRT_PI, E.exp(E.neg(E.mul(x, x)))),
    "erfinv": lambda x, y: E.mul(_SQRT_PI_OVER_2, E.exp(E.mul(y, y))),
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


log10 = math_unary("log10", "Base-10 logarithm; -inf at 0, NaN below.")
exp2 = math_unary("exp2", "``2 ** x``; integers promote to float32.")
erfc = math_unary("erfc", "``1 - erf(x)``, accurate where it is tiny (large ``x``).")
erfinv = math_unary("erfinv", """The inverse of ``erf`` on [-1, 1]: +-inf at +-1, NaN outside.

>>> import lucid
>>> round(lucid.erfinv(lucid.tensor([0.5])).item(), 6)
0.476936
""")


def logit(input, eps=None):
    """``log(z / (1 - z))`` with ``z = clamp(input, eps, 1 - eps)`` when ``eps`` is given
    (else ``z = input``: +-inf at 1 / 0, NaN outside [0, 1]). Integers promote to float32.
    Gradient ``1 / (z (1 - z))`` inside [eps, 1 - eps], 0 outside.

    >>> import lucid
    >>> round(lucid.logit(lucid.tensor([0.0]), eps=0.1).item(), 4)
    -2.1972
    """
    E._check_tensor("logit", input)
    z = input if input.dtype.is_floating_point else input.to(dtype="float32")
    if eps is not None:
        if isinstance(eps, bool) or not isinstance(eps, (int, float)):
            raise TypeError(f"logit(): argument 'eps' must be a number, got {type(eps).__name__}")
        z = E.clamp(z, float(eps), 1.0 - float(eps))
    return E.log(E.div(z, E.sub(1.0, z)))


# ----- binary kernels (coercion, kernel and, when recording, the node: one C++ call each) -----

def _xlogy_grad(g, a, b, y):
    # d/da = log(b), 0 where a == 0 and b <= 0 (PyTorch); d/db = a / b
    ga = E.where(E.logical_and(E.eq(a, 0), E.le(b, 0)), 0.0, xlogy(g, b))
    return ga, E.div(E.mul(g, a), b)


_autograd_logaddexp = math_binary("logaddexp", lambda g, a, b, y: (E.div(g, E.add(E.exp(E.sub(b, a)), 1.0)),
                                                                 E.div(g, E.add(E.exp(E.sub(a, b)), 1.0))))
_autograd_logaddexp2 = math_binary("logaddexp2", lambda g, a, b, y: (E.div(g, E.add(exp2(E.sub(b, a)), 1.0)),
                                                                   E.div(g, E.add(exp2(E.sub(a, b)), 1.0))))
_autograd_xlogy = math_binary("xlogy", _xlogy_grad)


def logaddexp(input, other):
    """``log(exp(input) + exp(other))`` without overflow."""
    return _autograd_logaddexp(input, other)


def logaddexp2(input, other):
    """``log2(2**input + 2**other)`` without overflow."""
    return _autograd_logaddexp2(input, other)


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input == 0`` (also for ``other`` 0 or inf), NaN
    where ``other`` is NaN. Numbers are accepted on either side.

    >>> import lucid
    >>> lucid.xlogy(lucid.tensor([0.0, 2.0]), lucid.tensor([0.0, 1.0])).tolist()
    [0.0, 0.0]
    """
    return _autograd_xlogy(input, other)


for _name in _INPLACE:
    globals()[_name] = inplace_form(_name, globals()[_name[:-1]])
del _name
