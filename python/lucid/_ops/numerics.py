"""Numerical helpers with PyTorch's names, composed from lucid ops (both streams;
differentiable where PyTorch's are): gcd, lcm, frexp, ldexp, trapezoid / trapz,
cumulative_trapezoid, gradient, cov, corrcoef.

* gcd / lcm: Euclid's algorithm on the absolute values, all elements at once
  (``remainder`` until every divisor is 0: at most ~92 rounds for int64);
  ``lcm = |a / gcd(a, b) * b|``, 0 when either is 0. Integer tensors only.
* frexp: ``e = floor(log2 |x|) + 1`` corrected by one where rounding moved it, and
  ``m = x * 2^-e`` in two exact power-of-two steps (so subnormal inputs work);
  (0, 0) at 0, (x, 0) at +-inf and NaN, as PyTorch. The mantissa's gradient is
  ``g * 2^-e``.
* trapezoid: ``sum (x[i+1] - x[i]) (y[i+1] + y[i]) / 2`` along ``dim``.
* gradient: central differences inside, one-sided at the ends (edge_order 1), with
  PyTorch's non-uniform formula when coordinates are given.
"""
from __future__ import annotations

import numbers

import lucid

from .._tensor import Tensor

__all__ = ["gcd", "lcm", "frexp", "ldexp", "trapezoid", "trapz", "cumulative_trapezoid", "gradient", "cov",
           "corrcoef"]
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


def _dim(fn, y, dim):
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise TypeError(f"{fn}(): argument 'dim' must be an int, got {type(dim).__name__}")
    if y.ndim == 0 or not -y.ndim <= dim < y.ndim:
        raise IndexError(f"{fn}(): dim {dim} out of range for a {y.ndim}-D input")
    return dim % y.ndim


def _steps(fn, y, x, dx, d):
    """The spacing between neighbours along d: a number, or a tensor broadcastable to
    the (n - 1)-long differences."""
    if x is None:
        step = 1.0 if dx is None else dx
        if not isinstance(step, numbers.Real) or isinstance(step, bool):
            raise TypeError(f"{fn}(): argument 'dx' must be a number, got {type(step).__name__}")
        return float(step)
    if dx is not None:
        raise TypeError(f"{fn}(): pass either 'x' or 'dx', not both")
    _tensor(fn, x, "x")
    n = y.shape[d]
    if x.ndim == 1:
        if x.shape[0] != n:
            raise ValueError(f"{fn}(): a 1-D 'x' must have {n} elements (y's size along dim {d}), got {x.shape[0]}")
        diffs = lucid.diff(x)
        return diffs.reshape((n - 1,) + (1,) * (y.ndim - 1 - d)) if n > 1 else diffs
    if x.ndim != y.ndim:
        raise ValueError(f"{fn}(): 'x' must be 1-D or have y's number of dimensions ({y.ndim}), got {x.ndim}-D")
    return lucid.diff(x, dim=d)


def _pair_means(fn, y, x, dx, dim):
    _tensor(fn, y, "y")
    d = _dim(fn, y, dim)
    yf = y if y.dtype.is_floating_point else y.float()
    n = yf.shape[d]
    step = _steps(fn, yf, x, dx, d)
    if n < 2:
        return None, d, yf
    mids = (lucid.narrow(yf, d, 1, n - 1) + lucid.narrow(yf, d, 0, n - 1)) * 0.5
    return mids * step, d, yf


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: samples ``y`` at points ``x`` (1-D of y's length
    along dim, or y's shape) or spaced ``dx`` (default 1).

    >>> import lucid
    >>> lucid.trapezoid(lucid.tensor([1.0, 2.0, 3.0]), dx=0.5).item()
    2.0
    """
    parts, d, yf = _pair_means("trapezoid", y, x, dx, dim)
    if parts is None:  # fewer than two samples: 0, the axis removed
        return lucid.sum(yf * 0.0, dim=d)
    return lucid.sum(parts, dim=d)


def trapz(y, x=None, *, dx=None, dim=-1):
    """The older name of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along ``dim`` (one element shorter than ``y``).

    >>> import lucid
    >>> lucid.cumulative_trapezoid(lucid.tensor([1.0, 2.0, 3.0])).tolist()
    [1.5, 4.0]
    """
    parts, d, yf = _pair_means("cumulative_trapezoid", y, x, dx, dim)
    if parts is None:
        return lucid.narrow(yf, d, 0, 0) * 0.0
    return lucid.cumsum(parts, dim=d)


def _gradient_1d(f, d, spacing, fn):
    n = f.shape[d]
    if n < 2:
        raise ValueError(f"{fn}(): each dimension differentiated must have at least edge_order + 1 = 2 "
                         f"elements, got size {n} along dim {d}")

    def part(start, length):
        return lucid.narrow(f, d, start, length)

    if isinstance(spacing, Tensor):  # coordinates along d
        if spacing.ndim != 1 or spacing.shape[0] != n:
            raise ValueError(f"{fn}(): a coordinate tensor in 'spacing' must be 1-D with {n} elements "
                             f"(the size of dim {d}), got shape {tuple(spacing.shape)}")
        h = lucid.diff(spacing.to(f.dtype)).reshape((n - 1,) + (1,) * (f.ndim - 1 - d))
        first = (part(1, 1) - part(0, 1)) / lucid.narrow(h, 0, 0, 1)
        last = (part(n - 1, 1) - part(n - 2, 1)) / lucid.narrow(h, 0, n - 2, 1)
        if n == 2:
            return lucid.cat([first, last], dim=d)
        hl, hr = lucid.narrow(h, 0, 0, n - 2), lucid.narrow(h, 0, 1, n - 2)
        inner = (part(2, n - 2) * (hl * hl) - part(0, n - 2) * (hr * hr) + part(1, n - 2) * (hr * hr - hl * hl)) \
            / (hl * hr * (hl + hr))
        return lucid.cat([first, inner, last], dim=d)
    h = float(spacing)
    first = (part(1, 1) - part(0, 1)) / h
    last = (part(n - 1, 1) - part(n - 2, 1)) / h
    if n == 2:
        return lucid.cat([first, last], dim=d)
    inner = (part(2, n - 2) - part(0, n - 2)) / (2.0 * h)
    return lucid.cat([first, inner, last], dim=d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates the derivative of ``input`` along each dim in ``dim`` (all by default):
    central differences inside, one-sided at the ends. ``spacing``: a number (all dims),
    a list of numbers (one per dim), or a list of 1-D coordinate tensors. Returns a tuple
    with one tensor per dim. Only ``edge_order=1``.

    >>> import lucid
    >>> [g.tolist() for g in lucid.gradient(lucid.tensor([1.0, 4.0, 9.0, 16.0]))]
    [[3.0, 4.0, 6.0, 7.0]]
    """
    fn = "gradient"
    f = _tensor(fn, input)
    if edge_order != 1:
        raise NotImplementedError(f"{fn}(): only edge_order=1 is implemented, got {edge_order!r}")
    if f.ndim == 0:
        raise ValueError(f"{fn}(): expected an input of at least one dimension, got a 0-D tensor")
    if dim is None:
        dims = list(range(f.ndim))
    elif isinstance(dim, numbers.Integral) and not isinstance(dim, bool):
        dims = [_dim(fn, f, dim)]
    else:
        dims = [_dim(fn, f, d) for d in dim]
    if len(set(dims)) != len(dims):
        raise ValueError(f"{fn}(): argument 'dim' names a dimension twice: {dim}")
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise ValueError(f"{fn}(): argument 'spacing' must hold one entry per dim differentiated "
                             f"({len(dims)}), got {len(spacing)}")
        steps = list(spacing)
    elif isinstance(spacing, numbers.Real) and not isinstance(spacing, bool):
        steps = [spacing] * len(dims)
    else:
        raise TypeError(f"{fn}(): argument 'spacing' must be a number or a list of numbers or 1-D tensors, got "
                        f"{type(spacing).__name__}")
    kinds = {"tensor" if isinstance(s, Tensor) else
             "number" if isinstance(s, numbers.Real) and not isinstance(s, bool) else type(s).__name__
             for s in steps}
    if not kinds <= {"tensor", "number"} or len(kinds) > 1:  # as PyTorch: all numbers or all tensors
        raise TypeError(f"{fn}(): the 'spacing' entries must be all numbers or all 1-D tensors, got "
                        f"{[type(s).__name__ for s in steps]}")
    ff = f if f.dtype.is_floating_point else f.float()
    return tuple(_gradient_1d(ff, d, s, fn) for d, s in zip(dims, steps))


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (variables, observations);
    a 1-D input is one variable (a 0-D result). ``fweights`` (integer repeat counts) and
    ``aweights`` (float importance weights) per observation; ``correction`` as PyTorch
    (1: Bessel's; with aweights, ``w_sum - correction * sum(w * aweights) / w_sum``).

    >>> import lucid
    >>> lucid.cov(lucid.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    fn = "cov"
    x = _tensor(fn, input)
    if x.ndim > 2:
        raise ValueError(f"{fn}(): expected input to have two or fewer dimensions, got {x.ndim}")
    if not isinstance(correction, numbers.Real) or isinstance(correction, bool):
        raise TypeError(f"{fn}(): argument 'correction' must be a number, got {type(correction).__name__}")
    one_var = x.ndim < 2
    x = x.reshape(1, -1) if one_var else x
    x = x if x.dtype.is_floating_point else x.float()
    n = x.shape[1]
    w = None
    for name, wt, integer in (("fweights", fweights, True), ("aweights", aweights, False)):
        if wt is None:
            continue
        _tensor(fn, wt, name)
        if wt.ndim != 1 or wt.shape[0] != n:
            raise ValueError(f"{fn}(): argument '{name}' must be 1-D with {n} elements (the observations), got "
                             f"shape {tuple(wt.shape)}")
        if integer and (wt.dtype.is_floating_point or wt.dtype.name == "bool"):
            raise TypeError(f"{fn}(): argument 'fweights' must be an integer tensor, got {wt.dtype}")
        if not integer and not wt.dtype.is_floating_point:
            raise TypeError(f"{fn}(): argument 'aweights' must be a floating-point tensor, got {wt.dtype}")
        if n and bool(lucid.any(wt < 0).item()):
            raise ValueError(f"{fn}(): argument '{name}' must be non-negative")
        wt = wt.to(x.dtype)
        w = wt if w is None else w * wt
    if w is None:
        w_sum = float(n)
        avg = lucid.mean(x, dim=1, keepdim=True)
        norm = w_sum - correction
    else:
        w_sum_t = lucid.sum(w)
        avg = lucid.sum(x * w, dim=1, keepdim=True) / w_sum_t
        w_sum = w_sum_t
        if aweights is None:
            norm = w_sum_t - correction
        else:
            norm = w_sum_t - lucid.sum(w * aweights.to(x.dtype)) / w_sum_t * correction
    norm = lucid.clamp(norm, min=0.0) if isinstance(norm, Tensor) else max(norm, 0.0)
    xm = x - avg
    c = lucid.matmul(xm * w if w is not None else xm, xm.transpose(0, 1)) / norm
    return c.reshape(()) if one_var else c


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input`` (see :func:`cov`), clipped
    to [-1, 1]; NaN for a row of zero variance.

    >>> import lucid
    >>> lucid.corrcoef(lucid.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = lucid.sqrt(lucid.diagonal(c))
    c = c / std.reshape(-1, 1) / std.reshape(1, -1)
    return lucid.clamp(c, -1.0, 1.0)

