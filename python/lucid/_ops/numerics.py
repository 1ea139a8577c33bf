"""Integer and floating-point representation helpers with PyTorch's names, composed
from lucid ops (both streams; differentiable where PyTorch's are): gcd, lcm, frexp,
ldexp. (trapezoid and gradient: _ops/integrate.py; cov and corrcoef: _ops/covariance.py.)

* gcd / lcm: Euclid's algorithm on the absolute values, all elements at once
  (``remainder`` until every divisor is 0: at most ~92 rounds for int64);
  ``lcm = |a / gcd(a, b) * b|``, 0 when either is 0. Integer tensors only.
* frexp: ``e = floor(log2 |x|) + 1`` corrected by one where rounding moved it, and
  ``m = x * 2^-e`` in two exact power-of-two steps (so subnormal inputs work);
  (0, 0) at 0, (x, 0) at +-inf and NaN, as PyTorch. The mantissa's gradient is
  ``g * 2^-e``.
"""
from __future__ import annotations

import numbers

import lucid

from .._tensor import Tensor

__all__ = ["gcd", "lcm", "frexp", "ldexp"]
TENSOR_METHODS = ["gcd", "lcm", "frexp", "ldexp"]


def _tensor(fn, x, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' must be a tensor, got {type(x).__name__}")
    return x


def _integers(fn, a, b):
    _tensor(fn, a)
    if not isinstance(b, Tensor):
        b = lucid.tensor(b, dtype=a.dtype, device=a.device) if isinstance(b, numbers.Integral) else b
    _tensor(fn, b, "other")
    for name, t in (("input", a), ("other", b)):
        if t.dtype.is_floating_point or t.dtype.name == "bool":
            raise TypeError(f"{fn}(): argument '{name}' must be an integer tensor, got {t.dtype}")
    return a, b


def gcd(input, other):
    """Greatest common divisor, elementwise with broadcasting; non-negative; ``gcd(0, 0) = 0``.

    >>> import lucid
    >>> lucid.gcd(lucid.tensor([12, -18, 0]), lucid.tensor([8, 12, 5])).tolist()
    [4, 6, 5]
    """
    a, b = _integers("gcd", input, other)
    a, b = lucid.abs(a), lucid.abs(b)
    a, b = a + b * 0, b + a * 0  # broadcast both to the result's shape and dtype
    while bool(lucid.any(b != 0).item()):
        nonzero = b != 0
        r = lucid.remainder(a, lucid.where(nonzero, b, 1))
        a, b = lucid.where(nonzero, b, a), lucid.where(nonzero, r, 0)
    return a


def lcm(input, other):
    """Least common multiple, elementwise with broadcasting; non-negative; 0 when either is 0.

    >>> import lucid
    >>> lucid.lcm(lucid.tensor([4, -6, 0]), lucid.tensor([6, 4, 3])).tolist()
    [12, 12, 0]
    """
    a, b = _integers("lcm", input, other)
    g = gcd(a, b)
    return lucid.abs(lucid.floor_divide(a, lucid.where(g == 0, 1, g)) * b)


def frexp(input):
    """``(mantissa, exponent)`` with ``input = mantissa * 2^exponent``, |mantissa| in [0.5, 1)
    (0 for 0), exponent int32. Floating tensors only. Returns a named pair like PyTorch's.

    >>> import lucid
    >>> m, e = lucid.frexp(lucid.tensor([8.0, -0.375, 0.0]))
    >>> m.tolist(), e.tolist()
    ([0.5, -0.75, 0.0], [4, -1, 0])
    """
    x = _tensor("frexp", input)
    if not x.dtype.is_floating_point:
        raise TypeError(f"frexp(): argument 'input' must be a floating-point tensor, got {x.dtype}")
    with lucid.no_grad():
        ax = lucid.abs(x)
        regular = (ax > 0) & lucid.isfinite(x)
        e = lucid.floor(lucid.log2(lucid.where(regular, ax, 1.0))) + 1.0
        for _ in range(2):  # log2's rounding near a power of two: move e by one where needed
            m = _scale(ax, -e)
            e = lucid.where(m >= 1.0, e + 1.0, lucid.where(m < 0.5, e - 1.0, e))
        e = lucid.where(regular, e, 0.0)
        half = lucid.floor(e * -0.5)
        s1, s2 = lucid.exp2(half), lucid.exp2(-e - half)
    mantissa = lucid.where(regular, x * s1 * s2, x)
    return _FrexpResult(mantissa, e.to(lucid.int32))


def _scale(x, k):
    """x * 2^k in two power-of-two factors (each in range where x * 2^k is)."""
    half = lucid.floor(k * 0.5)
    return x * lucid.exp2(half) * lucid.exp2(k - half)


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
    x = _tensor("ldexp", input)
    if not isinstance(other, Tensor):
        other = lucid.tensor(other, dtype=lucid.float32, device=x.device)
    if other.dtype.name == "bool" or x.dtype.name == "bool":
        raise TypeError("ldexp(): arguments 'input' and 'other' must not be bool tensors")
    if not x.dtype.is_floating_point:
        x = x.float()
    e = other if other.dtype.is_floating_point else other.to(x.dtype)
    return x * lucid.exp2(e)
