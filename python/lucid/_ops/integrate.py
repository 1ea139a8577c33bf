"""trapezoid / trapz, cumulative_trapezoid and gradient with PyTorch's signatures, composed
from lucid ops (both streams, differentiable).

* trapezoid: ``sum (x[i+1] - x[i]) (y[i+1] + y[i]) / 2`` along ``dim``.
* gradient: central differences inside, one-sided at the ends (edge_order 1), with
  PyTorch's non-uniform formula when coordinates are given.
"""
from __future__ import annotations

import numbers

from .._C import ShapeError
from .._tensor import Tensor
from .reduction import sum as sum_
from .scan import cumsum, diff
from .shape import cat, narrow

__all__ = ["trapezoid", "trapz", "cumulative_trapezoid", "gradient"]


def _tensor(fn, x, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' must be a tensor, got {type(x).__name__}")
    return x


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
            raise ShapeError(f"{fn}(): a 1-D 'x' must have {n} elements (y's size along dim {d}), got {x.shape[0]}")
        diffs = diff(x)
        return diffs.reshape((n - 1,) + (1,) * (y.ndim - 1 - d)) if n > 1 else diffs
    if x.ndim != y.ndim:
        raise ValueError(f"{fn}(): 'x' must be 1-D or have y's number of dimensions ({y.ndim}), got {x.ndim}-D")
    return diff(x, dim=d)


def _pair_means(fn, y, x, dx, dim):
    _tensor(fn, y, "y")
    d = _dim(fn, y, dim)
    yf = y if y.dtype.is_floating_point else y.float()
    n = yf.shape[d]
    step = _steps(fn, yf, x, dx, d)
    if n < 2:
        return None, d, yf
    mids = (narrow(yf, d, 1, n - 1) + narrow(yf, d, 0, n - 1)) * 0.5
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
        return sum_(yf * 0.0, dim=d)
    return sum_(parts, dim=d)


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
        return narrow(yf, d, 0, 0) * 0.0
    return cumsum(parts, dim=d)


def _gradient_1d(f, d, spacing, fn):
    n = f.shape[d]
    if n < 2:
        raise ValueError(f"{fn}(): each dimension differentiated must have at least edge_order + 1 = 2 "
                         f"elements, got size {n} along dim {d}")

    def part(start, length):
        return narrow(f, d, start, length)

    if isinstance(spacing, Tensor):  # coordinates along d
        if spacing.ndim != 1 or spacing.shape[0] != n:
            raise ValueError(f"{fn}(): a coordinate tensor in 'spacing' must be 1-D with {n} elements "
                             f"(the size of dim {d}), got shape {tuple(spacing.shape)}")
        h = diff(spacing.to(f.dtype)).reshape((n - 1,) + (1,) * (f.ndim - 1 - d))
        first = (part(1, 1) - part(0, 1)) / narrow(h, 0, 0, 1)
        last = (part(n - 1, 1) - part(n - 2, 1)) / narrow(h, 0, n - 2, 1)
        if n == 2:
            return cat([first, last], dim=d)
        hl, hr = narrow(h, 0, 0, n - 2), narrow(h, 0, 1, n - 2)
        inner = (part(2, n - 2) * (hl * hl) - part(0, n - 2) * (hr * hr) + part(1, n - 2) * (hr * hr - hl * hl)) \
            / (hl * hr * (hl + hr))
        return cat([first, inner, last], dim=d)
    h = float(spacing)
    first = (part(1, 1) - part(0, 1)) / h
    last = (part(n - 1, 1) - part(n - 2, 1)) / h
    if n == 2:
        return cat([first, last], dim=d)
    inner = (part(2, n - 2) - part(0, n - 2)) / (2.0 * h)
    return cat([first, inner, last], dim=d)


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
