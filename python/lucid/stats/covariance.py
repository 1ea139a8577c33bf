"""cov and corrcoef with PyTorch's signatures (weights, correction), composed from lucid
ops (both streams, differentiable)."""
from __future__ import annotations

import numbers

import lucid._namespace as lucid

from .._tensor import Tensor

__all__ = ["cov", "corrcoef"]
TENSOR_METHODS: list = []


def _tensor(fn, x, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' must be a tensor, got {type(x).__name__}")
    return x


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
