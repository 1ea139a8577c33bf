"""polygamma and mvlgamma, composed from lucid ops (both streams), and digamma's gradient.

``polygamma(n, x)`` for n >= 1 is ``(-1)^(n+1) n! zeta(n+1, x)`` with the Hurwitz
zeta ``zeta(s, y) = sum_k (y + k)^-s``. For ``y = x >= 1/2``: the first ``M = 10 + n``
terms are summed, and the rest by Euler-Maclaurin at ``z = y + M``:
``z^(1-s)/(s-1) + z^-s/2 + sum_j B_2j (s)_(2j-1) / (2j)! z^(1-s-2j)`` (10 Bernoulli
terms; at ``z >= 10.5 + n`` the first dropped term is below 1e-17 of the sum).
Below 1/2 the reflection ``psi^(n)(x) = (-1)^n psi^(n)(1-x) - pi^(n+1) P_n(cot(pi x))``,
``P_n`` the polynomial with ``d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x))``
(``P_0(c) = c``, ``P_(k+1) = -(1 + c^2) P_k'``); ``cot(pi x)`` is reduced exactly
to a tangent of an argument in [0, pi/4] (``_cot_pi``), so it is 0 at the half-integers. At 0 and the negative
integers (and -inf) the result is ``(-1)^(n+1) inf``, +inf gives 0, as PyTorch.
The forward runs in the input's dtype (float32 on the GPU stream) without recording;
the gradient is ``g * polygamma(n+1, x)``, itself differentiable.
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction

from .._tensor import Tensor
from ..autograd import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from . import elementwise as E
from .elementwise import _GRADIENT
from .math_extra import digamma, lgamma, tan

__all__ = ["polygamma", "mvlgamma"]
TENSOR_METHODS = ["mvlgamma"]

# B_2, B_4, ..., B_20
_BERNOULLI = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
              Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798),
              Fraction(-174611, 330)]


_MAX_ORDER = 100  # polygamma's largest n: its cost grows with n (a series of n + 11 terms, a degree-n polynomial)


def _cot_polynomial(n):
    """Integer coefficients (lowest power first) of P_n: d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x))."""
    p = [0, 1]
    for _ in range(n):
        dp = [k * p[k] for k in range(1, len(p))]  # P'
        # -(1 + c^2) P'
        out = [0] * (len(dp) + 2)
        for k, a in enumerate(dp):
            out[k] -= a
            out[k + 2] -= a
        p = out
    return p


def _hurwitz_zeta(s, y):
    """sum_k (y + k)^-s for y >= 1/2 (a tensor), integer s >= 2."""
    shift = 10 + s
    total = None
    for k in range(shift):
        term = E.pow(E.reciprocal(E.add(y, float(k))), s)
        total = term if total is None else E.add(total, term)
    t = E.reciprocal(E.add(y, float(shift)))
    tail = E.add(E.mul(E.pow(t, s - 1), 1.0 / (s - 1)), E.mul(E.pow(t, s), 0.5))
    t2 = E.mul(t, t)
    power = E.pow(t, s + 1)  # z^(1 - s - 2j) at j = 1
    rising = Fraction(s)  # (s)_(2j-1)
    for j, b in enumerate(_BERNOULLI, 1):
        coef = b * rising / math.factorial(2 * j)
        tail = E.add(tail, E.mul(power, float(coef)))
        power = E.mul(power, t2)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return E.add(total, tail)


def _polygamma_values(n, x):
    if n == 0:
        return digamma(x)
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    reflect = E.lt(x, 0.5)
    y = E.where(reflect, E.sub(1.0, x), x)
    psi_y = E.mul(_hurwitz_zeta(n + 1, y), sign * float(math.factorial(n)))
    c = _cot_pi(x)
    coeffs = _cot_polynomial(n)
    poly = E.add(E.mul(c, float(coeffs[-1])), float(coeffs[-2]))
    for a in reversed(coeffs[:-2]):  # Horner
        poly = E.add(E.mul(poly, c), float(a))
    reflected = E.sub(E.mul(psi_y, (-1.0) ** n), E.mul(poly, math.pi ** (n + 1)))
    out = E.where(reflect, reflected, psi_y)
    pole = E.logical_and(E.le(x, 0.0), E.eq(x, E.floor(x)))
    return E.where(pole, sign * math.inf, out)


def _cot_pi(x):
    """cot(pi x), reduced exactly to an argument in [0, pi/4]: r = x - floor(x) in [0, 1),
    cot(pi r) = -cot(pi (1 - r)), and cot(pi s) = tan(pi (1/2 - s)) for s in [1/4, 1/2]
    (so cot is exactly 0 at the half-integers; inf at the integers, which are poles)."""
    r = E.sub(x, E.floor(x))
    upper = E.gt(r, 0.5)
    s = E.where(upper, E.sub(1.0, r), r)
    c = E.where(E.gt(s, 0.25), tan(E.mul(E.sub(0.5, s), math.pi)), E.reciprocal(tan(E.mul(s, math.pi))))
    return E.where(upper, E.neg(c), c)


class _Polygamma(Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        return _polygamma_values(n, x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return E.mul(g, polygamma(ctx.n + 1, x)), None


def _check_float(fn, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a tensor, got {type(x).__name__}")
    if x.dtype.name == "bool":
        raise TypeError(f"{fn}(): argument 'input' must not be a bool tensor")
    return x if x.dtype.is_floating_point else x.float()


def polygamma(n, input):
    """The n-th derivative of digamma: ``psi^(n)(x)``; ``polygamma(0, x) = digamma(x)``.

    ``n`` a non-negative int; integer inputs promote to float32. Differentiable
    (gradient ``polygamma(n + 1, x)``). Accuracy and method: python/lucid/_ops/gamma_fns.py.

    >>> import lucid
    >>> round(lucid.polygamma(1, lucid.tensor([1.0])).item(), 6)  # pi^2 / 6
    1.644934
    """
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
        raise ValueError(f"polygamma(): argument 'n' must be a non-negative int, got {n!r}")
    if n > _MAX_ORDER:
        raise ValueError(f"polygamma(): argument 'n' must be at most {_MAX_ORDER}, got {n} (the series and the "
                         "reflection polynomial grow with n, and n! overflows float64 past 170)")
    x = _check_float("polygamma", input)
    n = int(n)
    if x._requires_grad and is_grad_enabled():
        return _Polygamma.apply(x, n)
    with no_grad():
        return _polygamma_values(n, x)


def _tensor_polygamma(self, n):
    """Method form of :func:`lucid.polygamma`: ``x.polygamma(n) == lucid.polygamma(n, x)``."""
    return polygamma(n, self)


Tensor.polygamma = _tensor_polygamma


def mvlgamma(input, p):
    """The log of the multivariate gamma function of dimension ``p``:
    ``p (p - 1) / 4 ln(pi) + sum_(i < p) lgamma(x - i / 2)``. Every element must exceed
    ``(p - 1) / 2`` (ValueError otherwise, as PyTorch). Differentiable (through lgamma).

    >>> import lucid
    >>> round(lucid.mvlgamma(lucid.tensor([2.5]), 2).item(), 6)
    0.857048
    """
    if not isinstance(p, numbers.Integral) or isinstance(p, bool) or p < 1:
        raise ValueError(f"mvlgamma(): argument 'p' must be a positive int, got {p!r}")
    x = _check_float("mvlgamma", input)
    if x.numel() and not bool(E.gt(x, (p - 1) / 2.0).all().item()):
        raise ValueError(f"mvlgamma(): all elements of 'input' must be greater than (p - 1) / 2 = {(p - 1) / 2}")
    out = E.add(lgamma(x), p * (p - 1) / 4.0 * math.log(math.pi))
    for i in range(1, p):
        out = E.add(out, lgamma(E.sub(x, i / 2.0)))
    return out


# digamma's gradient: polygamma(1, x) (recorded through elementwise's unary node).
_GRADIENT["digamma"] = lambda g, x, y: E.mul(g, polygamma(1, x))
