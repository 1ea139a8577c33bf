"""Order statistics with PyTorch's names, composed from lucid ops (sort, gather, where,
sum ...), so values are differentiable and run on either stream: kthvalue, mode,
quantile / nanquantile, nanmedian.

Where an index depends on comparisons (mode) it is found on the host from the values
read back, and the values are then gathered from the input on its device, so the
gradient flows to the elements chosen, as in PyTorch.
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from .._ops.common import constant, host_array, returns_values_indices, wrap_dim
from .._ops.elementwise import where
from .._ops.indexing import gather
from .._ops.reduction import sum as _sum
from .._ops.shape import stack
from .._ops.sorting import sort
from .._tensor import Tensor
from .reductions import _check, _float

__all__ = ["kthvalue", "mode", "quantile", "nanquantile", "nanmedian"]
TENSOR_METHODS = ["kthvalue", "mode", "quantile", "nanquantile", "nanmedian"]


@returns_values_indices
def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element (1-based) along ``dim``: ``(values, indices)``. Among equal
    values the index is the stable sort's (PyTorch's quickselect may name another of them)."""
    _check("kthvalue", input)
    x = input.reshape(1) if input.ndim == 0 else input
    d = wrap_dim(dim, x.ndim, "kthvalue")
    n = x.shape[d]
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= n:
        raise IndexError(f"kthvalue(): argument 'k' ({k!r}) must be in [1, {n}] for dimension {d}")
    v, i = sort(x, d)
    v, i = v.narrow(d, k - 1, 1), i.narrow(d, k - 1, 1)
    if not keepdim or input.ndim == 0:
        v, i = v.squeeze(d), i.squeeze(d)
    return (v.reshape(()), i.reshape(())) if input.ndim == 0 else (v, i)


@returns_values_indices
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest among equally frequent ones) and the
    index of its last occurrence: ``(values, indices)``."""
    _check("mode", input)
    x = input.reshape(1) if input.ndim == 0 else input
    d = wrap_dim(dim, x.ndim, "mode")
    if x.shape[d] == 0:
        raise IndexError(f"mode(): expected a non-empty dimension {d}")
    a = np.moveaxis(host_array(x), d, -1)
    rows = a.reshape(-1, a.shape[-1])
    idx = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        vals, counts = np.unique(row, return_counts=True)  # sorted: argmax picks the smallest of the most frequent
        best = vals[np.argmax(counts)]
        idx[r] = np.nonzero((row == best) | (np.isnan(row) & np.isnan(best)))[0][-1]
    index = constant(np.moveaxis(idx.reshape(a.shape[:-1] + (1,)), -1, d).copy(), x, "int64")
    v = gather(x, d, index)
    if not keepdim or input.ndim == 0:
        v, index = v.squeeze(d), index.squeeze(d)
    return (v.reshape(()), index.reshape(())) if input.ndim == 0 else (v, index)


_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(fn, input, q, dim, keepdim, interpolation, ignore_nan):
    _check(fn, input)
    _float(fn, input)
    if interpolation not in _MODES:
        raise ValueError(f"{fn}(): argument 'interpolation' must be one of {', '.join(_MODES)}, got "
                         f"{interpolation!r}")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise ValueError(f"{fn}(): argument 'q' must be a scalar or 1-D tensor, got {q.ndim}-D")
        if q.dtype != input.dtype:
            raise TypeError(f"{fn}(): argument 'q' must have input's dtype {input.dtype}, got {q.dtype}")
        qs, scalar_q = [builtins.float(v) for v in q.reshape(-1).tolist()], q.ndim == 0
    elif isinstance(q, numbers.Real) and not isinstance(q, bool):
        qs, scalar_q = [builtins.float(q)], True
    elif isinstance(q, (list, tuple)):
        qs, scalar_q = [builtins.float(v) for v in q], False
    else:
        raise TypeError(f"{fn}(): argument 'q' must be a number or a tensor, got {type(q).__name__}")
    if not builtins.all(0.0 <= v <= 1.0 for v in qs):
        raise ValueError(f"{fn}(): argument 'q' values must be in the range [0, 1], got {qs}")
    if input.numel() == 0:
        raise ValueError(f"{fn}(): input tensor must be non-empty")
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        x = input.reshape(1) if input.ndim == 0 else input
        d = wrap_dim(dim, x.ndim, fn)
    n = x.shape[d]
    srt = sort(x, d)[0]  # NaNs sort last
    nan = x.isnan()
    shape = list(srt.shape)
    shape[d] = 1
    if ignore_nan:  # per-slice ranks from the non-NaN counts (read back: one number per slice)
        count = _sum(nan.logical_not().to(dtype="int64"), d, True)
        last = np.maximum(host_array(count).astype(np.float64) - 1, 0)
    else:
        last = np.full(shape, n - 1, dtype=np.float64)
    # q as the input's dtype holds it, the ranks in float64 (PyTorch's: this decides "nearest"
    # and the floor / ceiling where q * (n - 1) lands within a float32 step of an integer)
    qs = host_array(constant(qs, x)).astype(np.float64).tolist()
    outs = []
    for qv in qs:
        rank = last * qv
        lo, hi = np.floor(rank), np.ceil(rank)
        if interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        elif interpolation == "nearest":
            lo = hi = np.round(rank)  # halves to even, as PyTorch
        vl = gather(srt, d, constant(lo.astype(np.int64), x, "int64"))
        if interpolation in ("lower", "higher", "nearest"):
            v = vl
        else:
            vh = gather(srt, d, constant(hi.astype(np.int64), x, "int64"))
            w = constant(rank - lo, x) if interpolation == "linear" else constant(0.5, x)
            v = vl + (vh - vl) * w
        if ignore_nan:
            v = where(count == 0, constant(float("nan"), x), v)
        else:
            v = where(nan.any(d, keepdim=True), constant(float("nan"), x), v)
        if not keepdim:
            v = v.squeeze(d)
        elif dim is None:
            v = v.reshape([1] * input.ndim)
        outs.append(v)
    if scalar_q:
        return outs[0]
    return stack(outs, 0)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles (a number or 1-D tensor in [0, 1]) along ``dim`` (all elements when
    None): rank ``q * (n - 1)`` in the sorted values, between neighbours by ``interpolation``
    (linear, lower, higher, midpoint, nearest). A slice with a NaN gives NaN. With a 1-D ``q``
    the quantiles stack on a new first dimension."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` over the non-NaN values of each slice (NaN where all are NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


@returns_values_indices
def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the non-NaN values; with ``dim``, ``(values, indices)``."""
    _check("nanmedian", input)
    x = input.reshape(-1) if dim is None else (input.reshape(1) if input.ndim == 0 else input)
    d = 0 if dim is None else wrap_dim(dim, x.ndim, "nanmedian")
    if x.shape[d] == 0:
        raise IndexError("nanmedian(): expected a non-empty input")
    v, i = sort(x, d)
    count = _sum(x.isnan().logical_not().to(dtype="int64"), d, True) if x.dtype.is_floating_point else None
    if count is None:
        k = constant((x.shape[d] - 1) // 2, x, "int64").reshape([1] * x.ndim)
    else:  # all NaN: the first NaN (index 0 of the sorted NaNs)
        k = ((count - 1).clamp(min=0)).floor_divide(2)
    shape = list(v.shape)
    shape[d] = 1
    k = k.expand(*shape)
    val, idx = gather(v, d, k), gather(i, d, k)
    if dim is None:
        return val.reshape(())
    if not keepdim or input.ndim == 0:
        val, idx = val.squeeze(d), idx.squeeze(d)
    return (val.reshape(()), idx.reshape(())) if input.ndim == 0 else (val, idx)
