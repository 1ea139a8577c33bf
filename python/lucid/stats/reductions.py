"""NaN-ignoring reductions, moments and histograms with PyTorch's names, composed from
lucid ops (differentiable, either stream): nansum, nanmean, var_mean, std_mean; and
histogram (counted on the host, as PyTorch does not differentiate it either).
"""
from __future__ import annotations

import builtins
import collections

import numpy as np

from .._creation import tensor
from .._ops.common import constant, host_array
from .._ops.elementwise import where
from .._ops.reduction import mean, std, var
from .._ops.reduction import sum as _sum
from .._tensor import Tensor

__all__ = ["nansum", "nanmean", "var_mean", "std_mean", "histogram"]
TENSOR_METHODS = ["nansum", "nanmean", "histogram"]


def _check(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


def _float(fn, x):
    if not x.dtype.is_floating_point:
        raise TypeError(f"{fn}(): expected input to have a floating point dtype, got {x.dtype}")


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero."""
    _check("nansum", input)
    x = where(input.isnan(), constant(0, input), input) if input.dtype.is_floating_point else input
    return _sum(x, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of the non-NaN elements (NaN where there are none); floating inputs only."""
    _check("nanmean", input)
    _float("nanmean", input)
    count = _sum(input.isnan().logical_not(), dim, keepdim).to(dtype=input.dtype)
    out = nansum(input, dim, keepdim) / count
    return out.to(dtype=dtype) if dtype is not None else out


def _var_args(dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var_mean(input, unbiased)
        unbiased, dim = dim, None
    return dim, unbiased, keepdim, correction


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim`` (all when None); ``correction`` (default 1) or the older
    ``unbiased`` flag, as :func:`lucid.var`."""
    _check("var_mean", input)
    dim, unbiased, keepdim, correction = _var_args(dim, unbiased, keepdim, correction)
    return (var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)``, as :func:`var_mean` with the square root of the variance."""
    _check("std_mean", input)
    dim, unbiased, keepdim, correction = _var_args(dim, unbiased, keepdim, correction)
    return (std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim))


hist_edges = collections.namedtuple("histogram", ["hist", "bin_edges"])
hist_edges.__doc__ = "The (hist, bin_edges) result of histogram, as PyTorch's return_types."


def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """``(hist, bin_edges)`` of a floating tensor. ``bins``: a count of equal bins over ``range``
    (default the input's min and max, widened by 0.5 each way when they are equal; [0, 1] when
    empty), or a 1-D tensor of increasing edges. Bins are half open, the last one closed;
    values outside are not counted. ``weight`` (input's shape) sums weights instead of
    ones; ``density`` divides by the total and the bin widths. Counted on the host."""
    _check("histogram", input)
    _float("histogram", input)
    x = host_array(input).reshape(-1)
    dt = np.float64 if input.dtype.name == "float64" else np.float32
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.numel() < 1 or not bins.dtype.is_floating_point:
            raise ValueError("histogram(): argument 'bins' as a tensor must be 1-D floating edges, got "
                             f"{bins.dtype} with shape {tuple(bins.shape)}")
        edges = host_array(bins).astype(dt)
        if np.any(np.diff(edges) < 0):
            raise ValueError("histogram(): argument 'bins' must be increasing")
    elif isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if bins <= 0:
            raise ValueError(f"histogram(): argument 'bins' must be a positive int, got {bins}")
        if range is not None:
            if len(range) != 2 or not range[0] <= range[1]:
                raise ValueError(f"histogram(): argument 'range' must be (min, max) with min <= max, got {range}")
            lo, hi = builtins.float(range[0]), builtins.float(range[1])
        elif x.size:
            lo, hi = builtins.float(np.nanmin(x)), builtins.float(np.nanmax(x))
        else:
            lo, hi = 0.0, 1.0
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ValueError(f"histogram(): range of [{lo}, {hi}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(dt(lo), dt(hi), builtins.int(bins) + 1, dtype=dt)
    else:
        raise TypeError(f"histogram(): argument 'bins' must be an int or a tensor, got {type(bins).__name__}")
    if weight is not None:
        _check("histogram", weight, "weight")
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError(f"histogram(): argument 'weight' must have input's shape {tuple(input.shape)}, got "
                             f"{tuple(weight.shape)}")
        w = host_array(weight).reshape(-1).astype(np.float64)
    else:
        w = np.ones(x.shape, np.float64)
    nb = edges.size - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    idx = np.searchsorted(edges, x[inside], side="right") - 1
    idx = np.minimum(idx, nb - 1)  # the last edge belongs to the last bin
    hist = np.bincount(idx, weights=w[inside], minlength=builtins.max(nb, 0)).astype(np.float64)
    if density:
        total = hist.sum()
        hist = hist / (total * np.diff(edges.astype(np.float64)))
    return hist_edges(tensor(hist.astype(dt), dtype=input.dtype, device=input.device),
                      tensor(edges, dtype=input.dtype, device=input.device))
