"""Floating-point specifics with PyTorch's names, their gradients and in-place forms:

* rounding toward zero: ``trunc`` (``fix``), ``frac`` (unary kernels,
  csrc/ops/math.cpp; ``trunc`` keeps integers, ``frac`` refuses them);
* the bool predicates ``signbit isposinf isneginf``; ``nan_to_num``;
* binary kernels: ``copysign``, the NaN-ignoring ``fmax`` / ``fmin``, ``nextafter``;
* mantissa and exponent, composed from lucid ops: ``frexp`` (``e = floor(log2 |x|) + 1``
  corrected by one where rounding moved it, and ``m = x * 2^-e`` in two exact
  power-of-two steps, so subnormal inputs work; (0, 0) at 0, (x, 0) at +-inf and NaN,
  as PyTorch; the mantissa's gradient is ``g * 2^-e``) and ``ldexp``.

Definitions, edge values and per-stream accuracy: docs/numerics.md, "Extra
elementwise math".
"""
from __future__ import annotations

import numbers

from .. import _C
from .._creation import tensor
from .._dtype import float32, int32
from .._info import finfo
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import elementwise as E
from .common import constant
from .elementwise import _DERIVATIVE, _GRADIENT, _binary_args, math_binary, math_unary
from .inplace import inplace_form
from .special import exp2, log2

_INPLACE = ["trunc_", "fix_", "frac_", "copysign_"]
__all__ = ["trunc", "fix", "frac", "signbit", "isposinf", "isneginf", "nan_to_num", "copysign", "fmax", "fmin",
           "nextafter", "frexp", "ldexp"] + _INPLACE
TENSOR_METHODS = list(__all__)


# ----- unary kernels -------------------------------------------------------------------------

_DERIVATIVE["trunc"] = None  # piecewise constant
_GRADIENT["frac"] = lambda g, x, y: E.mul(g, 1.0)  # x - trunc(x): slope 1

trunc = math_unary("trunc", """Rounds toward zero; the identity on integers (TypeError for bool).
``fix`` is the same. Gradient 0.

>>> import lucid
>>> lucid.trunc(lucid.tensor([-1.7, 2.5])).tolist()
[-1.0, 2.0]
""")
frac = math_unary("frac", """``x - trunc(x)`` (the sign of ``x``); NaN for +-inf; TypeError for integer inputs.

>>> import lucid
>>> lucid.frac(lucid.tensor([-1.5, 2.25])).tolist()
[-0.5, 0.25]
""")
fix = trunc


def _predicate(name, x):
    E._check_tensor(name, x)
    return Tensor(getattr(_C, name)(x._impl))


def signbit(input):
    """True where the sign bit is set: negative numbers, -0.0 and -NaN (False for bool
    and unsigned tensors).

    >>> import lucid
    >>> lucid.signbit(lucid.tensor([-0.0, 0.0, -2.0])).tolist()
    [True, False, True]
    """
    return _predicate("signbit", input)


def isposinf(input):
    """True where ``input`` is +inf (False everywhere for integer tensors)."""
    return _predicate("isposinf", input)


def isneginf(input):
    """True where ``input`` is -inf (False everywhere for integer tensors)."""
    return _predicate("isneginf", input)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the
    dtype's largest / lowest finite values); integer and bool tensors are returned copied."""
    E._check_tensor("nan_to_num", input)
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and (not isinstance(v, numbers.Real) or isinstance(v, bool)):
            raise TypeError(f"nan_to_num(): argument '{name}' must be a number, got {type(v).__name__}")
    if not input.dtype.is_floating_point:
        return input.clone()
    fi = finfo(input.dtype)
    nan = 0.0 if nan is None else nan
    posinf = fi.max if posinf is None else posinf
    neginf = fi.min if neginf is None else neginf
    x = E.where(input.isnan(), constant(nan, input), input)
    x = E.where(x == float("inf"), constant(posinf, input), x)
    return E.where(x == float("-inf"), constant(neginf, input), x)


# ----- binary kernels (coercion, kernel and, when recording, the node: one C++ call each) -----

def _copysign_grad(g, a, b, y):
    # y / a is +-1: 0 where a == 0; nothing flows to the sign source
    zero = E.eq(a, 0)
    return E.where(zero, 0.0, E.mul(g, E.div(y, E.where(zero, 1.0, a)))), E._zeros_like(E.mul(g, b))


def _extreme_grad(is_max):
    def gradient(g, a, b, y):
        # to `a` where it was chosen (ties too) or b is NaN, else to `b`
        pick_a = E.ge(a, b) if is_max else E.le(a, b)
        pick_a = E.logical_or(pick_a, E.isnan(b))
        return E._masked(pick_a, g), E._masked(E.logical_not(pick_a), g)
    return gradient


_autograd_copysign = math_binary("copysign", _copysign_grad)
_autograd_fmax = math_binary("fmax", _extreme_grad(True))
_autograd_fmin = math_binary("fmin", _extreme_grad(False))


def copysign(input, other):
    """``|input|`` with the sign bit of ``other`` (-0.0 counts as negative); integers
    promote to float32."""
    return _autograd_copysign(input, other)


def fmax(input, other):
    """Elementwise maximum that ignores NaN (NaN only where both are NaN), unlike
    ``maximum``, which propagates it. Integers keep their dtype.

    >>> import lucid
    >>> lucid.fmax(lucid.tensor([float('nan'), 1.0]), lucid.tensor([2.0, float('nan')])).tolist()
    [2.0, 1.0]
    """
    return _autograd_fmax(input, other)


def fmin(input, other):
    """Elementwise minimum that ignores NaN (see ``fmax``)."""
    return _autograd_fmin(input, other)


def nextafter(input, other):
    """The next representable value after ``input`` toward ``other`` (exact, in the
    floating dtype both promote to; TypeError for integers). Not differentiable."""
    a, b = _binary_args(input, other)
    return _C.nextafter(a._impl, b._impl)


# ----- mantissa and exponent -------------------------------------------------------------------

def frexp(input):
    """``(mantissa, exponent)`` with ``input = mantissa * 2^exponent``, |mantissa| in [0.5, 1)
    (0 for 0), exponent int32. Floating tensors only. Returns a named pair like PyTorch's.

    >>> import lucid
    >>> m, e = lucid.frexp(lucid.tensor([8.0, -0.375, 0.0]))
    >>> m.tolist(), e.tolist()
    ([0.5, -0.75, 0.0], [4, -1, 0])
    """
    x = E._check_tensor("frexp", input)
    if not x.dtype.is_floating_point:
        raise TypeError(f"frexp(): argument 'input' must be a floating-point tensor, got {x.dtype}")
    with no_grad():
        ax = E.abs(x)
        regular = (ax > 0) & E.isfinite(x)
        e = E.floor(log2(E.where(regular, ax, 1.0))) + 1.0
        for _ in range(2):  # log2's rounding near a power of two: move e by one where needed
            m = _scale(ax, -e)
            e = E.where(m >= 1.0, e + 1.0, E.where(m < 0.5, e - 1.0, e))
        e = E.where(regular, e, 0.0)
        half = E.floor(e * -0.5)
        s1, s2 = exp2(half), exp2(-e - half)
    mantissa = E.where(regular, x * s1 * s2, x)
    return _FrexpResult(mantissa, e.to(int32))


def _scale(x, k):
    """x * 2^k in two power-of-two factors (each in range where x * 2^k is)."""
    half = E.floor(k * 0.5)
    return x * exp2(half) * exp2(k - half)


class _FrexpResult(tuple):
    """``(mantissa, exponent)``, also readable as ``.mantissa`` / ``.exponent``."""

    def __new__(cls, mantissa, exponent):
        return super().__new__(cls, (mantissa, exponent))

    mantissa = property(lambda self: self[0])
    exponent = property(lambda self: self[1])


def ldexp(input, other):
    """``input * 2^other`` (integer inputs give float32); differentiable in both.

    >>> import lucid
    >>> lucid.ldexp(lucid.tensor([1.0, 3.0]), lucid.tensor([3, -1])).tolist()
    [8.0, 1.5]
    """
    x = E._check_tensor("ldexp", input)
    if not isinstance(other, Tensor):
        other = tensor(other, dtype=float32, device=x.device)
    if other.dtype.name == "bool" or x.dtype.name == "bool":
        raise TypeError("ldexp(): arguments 'input' and 'other' must not be bool tensors")
    if not x.dtype.is_floating_point:
        x = x.float()
    e = other if other.dtype.is_floating_point else other.to(x.dtype)
    return x * exp2(e)


for _name in _INPLACE:
    globals()[_name] = inplace_form(_name, globals()[_name[:-1]])
del _name
