"""``lucid.special``: PyTorch's ``torch.special`` names that lucid computes.

Most are lucid's own functions under the SciPy-style names (``expit`` is
``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma``, ``multigammaln``
is ``mvlgamma``). Composed here from lucid ops (both streams, differentiable):

* ``xlog1py(x, y) = x log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN);
* ``entr(x) = -x ln x`` (0 at 0, -inf below);
* ``ndtr(x) = erfc(-x / sqrt 2) / 2``; ``log_ndtr`` its log: ``log1p(-erfc(x / sqrt 2) / 2)``
  above 0, the log of ``ndtr`` down to -10, and below the asymptotic series
  ``-x^2/2 - ln(-x) - ln(2 pi)/2 + log1p(sum_k (-1)^k (2k-1)!! / x^2k)`` (16 terms);
* ``ndtri`` (the inverse of ``ndtr``): the lower half ``q = min(p, 1 - p)`` (exact),
  a start from ``erfinv`` (or, below 1e-6, ``-sqrt(t - ln t - ln 2 pi)``, ``t = -2 ln q``),
  then 5 Newton steps on ``log_ndtr(z) = ln q``; its gradient ``sqrt(2 pi) exp(z^2 / 2)``;
* ``i0, i0e, i1, i1e`` (modified Bessel functions of the first kind, orders 0 and 1,
  and their ``exp(-|x|)``-scaled forms): the power series up to ``|x| = 20`` (60 terms),
  the large-argument expansion ``e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k`` (30 terms) above.

Accuracy against float64 references: tests/test_special.py.
"""
from __future__ import annotations

import math

from . import _C, _ops as _o
from ._creation import ones_like
from ._ops.common import as_tensor as _as_tensor
from ._ops.gamma import _check_float
from ._ops.nn import log_softmax as _log_softmax
from ._ops.nn import softmax as _softmax
from ._tensor import Tensor
from .autograd import Function
from .autograd.grad_mode import no_grad

__all__ = ["expit", "logit", "erf", "erfc", "erfinv", "gammaln", "digamma", "psi", "polygamma", "multigammaln",
           "xlogy", "xlog1py", "sinc", "entr", "ndtr", "ndtri", "log_ndtr", "logsumexp", "softmax", "log_softmax",
           "expm1", "exp2", "log1p", "round", "i0", "i0e", "i1", "i1e"]

expit = _o.sigmoid
logit = _o.logit
erf, erfc, erfinv = _o.erf, _o.erfc, _o.erfinv
gammaln = _o.lgamma
digamma = psi = _o.digamma
polygamma = _o.polygamma
xlogy = _o.xlogy
sinc = _o.sinc
expm1, exp2, log1p = _o.expm1, _o.exp2, _o.log1p
round = _o.round  # noqa: A001
logsumexp = _o.logsumexp

_SQRT1_2 = math.sqrt(0.5)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def multigammaln(input, p):
    """``lucid.mvlgamma`` under SciPy's name."""
    return _o.mvlgamma(input, p)


def softmax(input, dim, dtype=None):
    """``lucid.nn.functional.softmax`` (``dim`` required, as torch.special)."""
    return _softmax(input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    """``lucid.nn.functional.log_softmax`` (``dim`` required, as torch.special)."""
    return _log_softmax(input, dim, dtype)


def _float(fn, x):
    """``x`` checked as special.<fn>'s floating input (integers become float32)."""
    return _check_float(f"special.{fn}", x)


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input == 0`` unless ``other`` is NaN; numbers
    are accepted for either side.

    >>> import lucid
    >>> lucid.special.xlog1py(lucid.tensor([0.0, 2.0]), lucid.tensor([-1.0, 0.0])).tolist()
    [0.0, 0.0]
    """
    x = input if isinstance(input, Tensor) else _as_tensor(input, other, "input")
    y = other if isinstance(other, Tensor) else _as_tensor(other, x, "other")
    x, y = _float("xlog1py", x), _float("xlog1py", y)
    zero = _o.eq(x, 0.0)
    # where x == 0 a y at or below -1 (or infinite) would make 0 * inf: read 0 there instead
    bad = _o.logical_and(zero, _o.logical_or(_o.le(y, -1.0), _o.isinf(y)))
    return x * _o.log1p(_o.where(bad, 0.0, y))


def entr(input):
    """``-x ln x`` for x > 0, 0 at 0, -inf below 0, NaN at NaN.

    >>> import lucid
    >>> [f"{v:.6f}" for v in lucid.special.entr(lucid.tensor([0.0, 0.5, -1.0])).tolist()]
    ['0.000000', '0.346574', '-inf']
    """
    x = _float("entr", input)
    pos = _o.gt(x, 0.0)
    safe = _o.where(pos, x, 1.0)
    out = _o.where(pos, -(safe * _o.log(safe)), _o.where(_o.eq(x, 0.0), 0.0, -math.inf))
    return _o.where(_o.isnan(x), x, out)


def ndtr(input):
    """The standard normal CDF ``(1 + erf(x / sqrt 2)) / 2``, computed as ``erfc(-x / sqrt 2) / 2``.

    >>> import lucid
    >>> f"{lucid.special.ndtr(lucid.tensor([1.0])).item():.6f}"
    '0.841345'
    """
    x = _float("ndtr", input)
    return _o.erfc(x * -_SQRT1_2) * 0.5


def log_ndtr(input):
    """``ln ndtr(x)``, accurate in both tails (see the module docstring).

    >>> import lucid
    >>> f"{lucid.special.log_ndtr(lucid.tensor([-20.0])).item():.4f}"
    '-203.9172'
    """
    x = _float("log_ndtr", input)
    upper = _o.log1p(_o.erfc(_o.clamp(x, min=0.0) * _SQRT1_2) * -0.5)
    middle = _o.log(_o.erfc(_o.clamp(x, -10.0, 0.0) * -_SQRT1_2) * 0.5)
    xa = _o.clamp(x, max=-10.0)
    inv2 = _o.reciprocal(xa * xa)
    series, term = None, None
    for k in range(1, 17):  # sum_k (-1)^k (2k-1)!! / x^(2k)
        term = inv2 * -1.0 if term is None else term * inv2 * -(2 * k - 1)
        series = term if series is None else series + term
    tail = xa * xa * -0.5 - _o.log(-xa) - _HALF_LOG_2PI + _o.log1p(series)
    return _o.where(_o.gt(x, 0.0), upper, _o.where(_o.lt(x, -10.0), tail, middle))


def _ndtri_values(p):
    q = _o.where(_o.gt(p, 0.5), 1.0 - p, p)  # exact for p >= 1/2
    qs = _o.clamp(q, 1e-6, 0.5)
    start = _o.erfinv(qs * 2.0 - 1.0) * math.sqrt(2.0)
    tiny = 1e-300 if p.dtype.name == "float64" else 1e-38  # q below: -inf at q == 0, masked last
    t = _o.log(_o.clamp(q, min=tiny)) * -2.0
    start = _o.where(_o.lt(q, 1e-6), -_o.sqrt(t - _o.log(t) - 2.0 * _HALF_LOG_2PI), start)
    log_q = _o.log(_o.clamp(q, min=tiny))
    z = start
    for _ in range(5):  # Newton on log_ndtr(z) = ln q: step (log_ndtr(z) - ln q) * ndtr(z) / pdf(z)
        lz = log_ndtr(z)
        z = z - (lz - log_q) * _o.exp(lz + z * z * 0.5 + _HALF_LOG_2PI)
    z = _o.where(_o.eq(q, 0.0), -math.inf, _o.where(_o.eq(q, 0.5), 0.0, z))
    z = _o.where(_o.gt(p, 0.5), -z, z)
    return _o.where(_o.logical_or(_o.lt(p, 0.0), _o.gt(p, 1.0)), math.nan, z)


class _Ndtri(Function):
    """ndtri's graph node (NdtriBackward): `_C.autograd_ndtri(p, z)`
    (csrc/autograd/special.cpp) records it over the values computed here, and its
    first-order backward (this formula with the saved output for ``ndtri(p)``: the
    same ops on the same input, the same bits) is there. This class is the formula
    under create_graph; the node is its ctx (saved (p, z))."""

    @staticmethod
    def backward(ctx, g):
        p, _ = ctx.saved_tensors
        z = ndtri(p)  # recorded again under create_graph: the gradient is differentiable
        return (g * _o.exp(z * z * 0.5 + _HALF_LOG_2PI),)


_C._register_ndtri(_Ndtri)


def ndtri(input):
    """The inverse of :func:`ndtr` (the standard normal quantile): -inf at 0, +inf at 1,
    NaN outside [0, 1]. Differentiable (``1 / pdf(ndtri(p))``).

    >>> import lucid
    >>> f"{lucid.special.ndtri(lucid.tensor([0.975])).item():.5f}"
    '1.95996'
    """
    p = _float("ndtri", input)
    with no_grad():
        z = _ndtri_values(p)
    return _C.autograd_ndtri(p, z)  # NdtriBackward over p when it requires grad and grad mode is on


_SERIES_TERMS, _ASYM_TERMS, _SWITCH = 60, 30, 20.0


def _bessel(nu, x, scaled):
    """I_nu(x) (nu 0 or 1), times exp(-|x|) when scaled; differentiable through both branches."""
    ax = _o.abs(x)
    small = _o.clamp(ax, max=_SWITCH)
    quarter = small * small * 0.25
    term = small * 0.5 if nu == 1 else ones_like(small)
    total = term
    for k in range(1, _SERIES_TERMS):  # (x/2)^nu sum (x^2/4)^k / (k! (k + nu)!)
        term = term * quarter * (1.0 / (k * (k + nu)))
        total = total + term
    series = total * _o.exp(-small) if scaled else total
    big = _o.clamp(ax, min=_SWITCH)
    inv = _o.reciprocal(big)
    coef, acc, power = 1.0, None, None
    for k in range(_ASYM_TERMS):  # sum (-1)^k a_k(nu) / x^k
        if k:
            coef *= -(4 * nu * nu - (2 * k - 1) ** 2) / (8.0 * k)
            power = inv if power is None else power * inv
        piece = power * coef if power is not None else ones_like(big)
        acc = piece if acc is None else acc + piece
    lead = -0.5 * _o.log(big * (2.0 * math.pi))
    asym = acc * _o.exp(lead if scaled else big + lead)
    out = _o.where(_o.gt(ax, _SWITCH), asym, series)
    if nu == 1:
        out = _o.where(_o.lt(x, 0.0), -out, out)
    return out


def i0(input):
    """The modified Bessel function of the first kind of order 0.

    >>> import lucid
    >>> f"{lucid.special.i0(lucid.tensor([1.0])).item():.6f}"
    '1.266066'
    """
    return _bessel(0, _float("i0", input), False)


def i0e(input):
    """``exp(-|x|) i0(x)``, finite for every finite x."""
    return _bessel(0, _float("i0e", input), True)


def i1(input):
    """The modified Bessel function of the first kind of order 1 (odd).

    >>> import lucid
    >>> f"{lucid.special.i1(lucid.tensor([1.0])).item():.6f}"
    '0.565159'
    """
    return _bessel(1, _float("i1", input), False)


def i1e(input):
    """``exp(-|x|) i1(x)``, finite for every finite x."""
    return _bessel(1, _float("i1e", input), True)
