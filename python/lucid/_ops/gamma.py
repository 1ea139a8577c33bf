"""The gamma function family (both streams): ``lgamma`` and ``digamma`` (unary kernels,
csrc/ops/math.cpp), ``polygamma`` and ``mvlgamma``, with their gradients and the
in-place forms ``lgamma_`` / ``digamma_``. polygamma's ops run
in C++ (csrc/autograd/special.cpp: `_C.autograd_polygamma`, one call that also records
PolygammaBackward), with the coefficients that need exact arithmetic computed here
(``_plan``); mvlgamma is composed from lucid ops.

``polygamma(n, x)`` for n >= 1 is ``(-1)^(n+1) n! zeta(n+1, x)`` with the Hurwitz
zeta ``zeta(s, y) = sum_k (y + k)^-s``. For ``y = x >= 1/2``: the first ``M = 10 + n``
terms are summed, and the rest by Euler-Maclaurin at ``z = y + M``:
``z^(1-s)/(s-1) + z^-s/2 + sum_j B_2j (s)_(2j-1) / (2j)! z^(1-s-2j)`` (10 Bernoulli
terms; at ``z >= 10.5 + n`` the first dropped term is below 1e-17 of the sum).
Below 1/2 the reflection ``psi^(n)(x) = (-1)^n psi^(n)(1-x) - pi^(n+1) P_n(cot(pi x))``,
``P_n`` the polynomial with ``d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x))``
(``P_0(c) = c``, ``P_(k+1) = -(1 + c^2) P_k'``); ``cot(pi x)`` is reduced exactly
to a tangent of an argument in [0, pi/4] (``cot_pi`` in special.cpp), so it is 0 at the
half-integers. At 0 and the negative integers (and -inf) the result is
``(-1)^(n+1) inf``, +inf gives 0, as PyTorch.
The forward runs in the input's dtype (float32 on the GPU stream) without recording;
the gradient is ``g * polygamma(n+1, x)``, itself differentiable.
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction

from .. import _C
from .._tensor import Tensor
from ..autograd import Function
from . import elementwise as E
from .elementwise import _GRADIENT, math_unary
from .inplace import inplace_form

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "lgamma_", "digamma_"]
TENSOR_METHODS = ["lgamma", "digamma", "mvlgamma", "lgamma_", "digamma_"]

lgamma = math_unary("lgamma", "``ln |Gamma(x)|``; +inf at 0, the negative integers and +-inf. Gradient digamma(x).")
digamma = math_unary("digamma", """``psi(x) = d/dx ln Gamma(x)``: -inf at +0, +inf at -0, NaN at the negative
integers (as PyTorch). Gradient ``polygamma(1, x)`` (lucid/_ops/gamma.py).

>>> import lucid
>>> round(lucid.digamma(lucid.tensor([1.0])).item(), 6)
-0.577216
""")

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


def _plan(n):
    """What polygamma's ops of order n read that needs exact arithmetic, rounded once:
    the Euler-Maclaurin coefficients for s = n + 1, (-1)^(n+1) n!, and P_n's
    coefficients as floats (csrc/autograd/special.cpp runs the same ops with them)."""
    s = n + 1
    bernoulli, rising = [], Fraction(s)
    for j, b in enumerate(_BERNOULLI, 1):
        bernoulli.append(float(b * rising / math.factorial(2 * j)))
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    sign = -1.0 if n % 2 == 0 else 1.0
    return bernoulli, sign * float(math.factorial(n)), [float(a) for a in _cot_polynomial(n)]


_PLANNED = set()


def _ensure_plans(*orders):
    """Registers with _C the plans of these orders (n >= 1) not registered yet."""
    for n in orders:
        if n >= 1 and n not in _PLANNED:
            _C._polygamma_plan(n, *_plan(n))
            _PLANNED.add(n)


class _Polygamma(Function):
    """polygamma's graph node (PolygammaBackward): `_C.autograd_polygamma(x, n)`
    (csrc/autograd/special.cpp) runs the composition described above (`polygamma_values`
    there: the ops the Python composition ran, in its order, so the same bits) and
    records the node, whose first-order backward, g * polygamma(n + 1, x), is there.
    This class is that formula under create_graph; the node is its ctx (saved (x,),
    ``ctx.params[0]`` n)."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        n = ctx.params[0] + 1
        _ensure_plans(n, n + 1)
        return (E.mul(g, _C.autograd_polygamma(x, n)),)


_C._register_polygamma(_Polygamma)
_ensure_plans(1)  # digamma's gradient, recorded in C++ (csrc/autograd/unary.cpp), reads polygamma(1, x)


def _check_float(fn, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a tensor, got {type(x).__name__}")
    if x.dtype.name == "bool":
        raise TypeError(f"{fn}(): argument 'input' must not be a bool tensor")
    return x if x.dtype.is_floating_point else x.float()


def polygamma(n, input):
    """The n-th derivative of digamma: ``psi^(n)(x)``; ``polygamma(0, x) = digamma(x)``.

    ``n`` a non-negative int; integer inputs promote to float32. Differentiable
    (gradient ``polygamma(n + 1, x)``). Accuracy and method: python/lucid/_ops/gamma.py.

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
    _ensure_plans(n, n + 1)
    return _C.autograd_polygamma(x, n)  # the values and (when recording) PolygammaBackward: one C++ call


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


# The unary node's formulas under create_graph (LgammaBackward, DigammaBackward; the ops
# run and record in C++, csrc/autograd/unary.h). digamma's gradient is polygamma(1, x).
_GRADIENT["lgamma"] = lambda g, x, y: E.mul(g, digamma(x))
_GRADIENT["digamma"] = lambda g, x, y: E.mul(g, polygamma(1, x))

lgamma_ = inplace_form("lgamma_", lgamma)
digamma_ = inplace_form("digamma_", digamma)
