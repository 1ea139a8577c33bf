"""Reductions and statistics composed from lucid ops (sort, gather, where,
cumsum, sum ...), so values are differentiable and run on either stream:
nansum, nanmean, nan_to_num, std_mean, var_mean, cummax / cummin,
logcumsumexp, kthvalue, mode, quantile / nanquantile, nanmedian, isin,
searchsorted, bucketize; histogram and unique_consecutive (counted on the
host, as PyTorch does not differentiate them either).

Where an index depends on comparisons along a scan (cummax / cummin, mode)
the indices are found on the host from the values read back, and the values
are then gathered from the input on its device, so the gradient flows to
the elements chosen, as in PyTorch.
"""
from __future__ import annotations

import builtins
import collections
import numbers

import numpy as np

from .._tensor import Tensor
from .reduction import returns_values_indices
from .common import wrap_dim

__all__ = ["nansum", "nanmean", "nan_to_num", "std_mean", "var_mean", "cummax", "cummin", "logcumsumexp",
           "kthvalue", "mode", "quantile", "nanquantile", "nanmedian", "isin", "searchsorted", "bucketize",
           "histogram", "unique_consecutive"]
TENSOR_METHODS = ["nansum", "nanmean", "nan_to_num", "cummax", "cummin", "logcumsumexp", "kthvalue", "mode",
                  "quantile", "nanquantile", "nanmedian", "histogram", "unique_consecutive"]


def _check(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


def _float(fn, x):
    if not x.dtype.is_floating_point:
        raise TypeError(f"{fn}(): expected input to have a floating point dtype, got {x.dtype}")


def _const(value, like, dtype=None):
    from .._creation import tensor

    return tensor(value, dtype=dtype or like.dtype, device=like.device)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero."""
    from .elementwise import where
    from .reduction import sum as _sum

    _check("nansum", input)
    x = where(input.isnan(), _const(0, input), input) if input.dtype.is_floating_point else input
    return _sum(x, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of the non-NaN elements (NaN where there are none); floating inputs only."""
    from .reduction import sum as _sum

    _check("nanmean", input)
    _float("nanmean", input)
    count = _sum(input.isnan().logical_not(), dim, keepdim).to(dtype=input.dtype)
    out = nansum(input, dim, keepdim) / count
    return out.to(dtype=dtype) if dtype is not None else out


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the
    dtype's largest / lowest finite values); integer and bool tensors are returned copied."""
    from .._info import finfo
    from .elementwise import where

    _check("nan_to_num", input)
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and (not isinstance(v, numbers.Real) or isinstance(v, bool)):
            raise TypeError(f"nan_to_num(): argument '{name}' must be a number, got {type(v).__name__}")
    if not input.dtype.is_floating_point:
        return input.clone()
    fi = finfo(input.dtype)
    nan = 0.0 if nan is None else nan
    posinf = fi.max if posinf is None else posinf
    neginf = fi.min if neginf is None else neginf
    x = where(input.isnan(), _const(nan, input), input)
    x = where(x == float("inf"), _const(posinf, input), x)
    return where(x == float("-inf"), _const(neginf, input), x)


def _var_args(dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var_mean(input, unbiased)
        unbiased, dim = dim, None
    return dim, unbiased, keepdim, correction


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim`` (all when None); ``correction`` (default 1) or the older
    ``unbiased`` flag, as :func:`lucid.var`."""
    from .reduction import mean, var

    _check("var_mean", input)
    dim, unbiased, keepdim, correction = _var_args(dim, unbiased, keepdim, correction)
    return (var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)``, as :func:`var_mean` with the square root of the variance."""
    from .reduction import mean, std

    _check("std_mean", input)
    dim, unbiased, keepdim, correction = _var_args(dim, unbiased, keepdim, correction)
    return (std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim))


def _host(x):
    a = x.detach().to("cpu")
    if a.dtype.name in ("bfloat16", "float16"):
        a = a.to(dtype="float32")
    return np.asarray(a.numpy())


def _cum_extreme(fn, input, dim, is_max):
    from .indexing import gather

    _check(fn, input)
    if input.ndim == 0:
        return input.clone(), _const(0, input, "int64")
    d = wrap_dim(dim, input.ndim, fn)
    a = np.moveaxis(_host(input), d, -1)
    idx = np.zeros(a.shape, dtype=np.int64)
    if a.shape[-1]:
        best = a[..., 0].copy()
        cur = np.zeros(a.shape[:-1], dtype=np.int64)
        for i in range(a.shape[-1]):
            v = a[..., i]
            with np.errstate(invalid="ignore"):
                better = (v >= best) if is_max else (v <= best)
            # PyTorch's rule: a NaN takes over (and each later NaN), then nothing replaces it
            take = np.isnan(v) | (~np.isnan(best) & better) if a.dtype.kind == "f" else better
            best = np.where(take, v, best)
            cur = np.where(take, i, cur)
            idx[..., i] = cur
    index = _const(np.moveaxis(idx, -1, d).copy(), input, "int64")
    return gather(input, d, index), index


@returns_values_indices
def cummax(input, dim):
    """Running maximum along ``dim``: ``(values, indices)``; ties take the later index and a
    NaN propagates, as PyTorch."""
    return _cum_extreme("cummax", input, dim, True)


@returns_values_indices
def cummin(input, dim):
    """Running minimum along ``dim``: ``(values, indices)`` (ties: the later index; NaN propagates)."""
    return _cum_extreme("cummin", input, dim, False)


def _logaddexp(a, b):
    from .elementwise import maximum, where
    from .special import log1p

    m = maximum(a, b)
    # exp(-|a - b|) in [0, 1]: never overflows; equal infinities give m itself
    d = (a - b).abs()
    safe = where(d.isnan(), _const(0, d), d)
    return m + log1p((-safe).exp())


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input)))`` along ``dim`` without overflow: a log-step scan of pairwise
    log-add-exp (each step adds the running value ``2^k`` places back)."""
    from .._creation import full
    from .shape import cat

    _check("logcumsumexp", input)
    _float("logcumsumexp", input)
    if input.ndim == 0:
        return input.clone()
    d = wrap_dim(dim, input.ndim, "logcumsumexp")
    n = input.shape[d]
    x, k = input, 1
    while k < n:
        shape = list(x.shape)
        shape[d] = k
        pad = full(shape, float("-inf"), dtype=x.dtype, device=x.device)
        prev = cat([pad, x.narrow(d, 0, n - k)], d)
        head, tail = x.narrow(d, 0, k), _logaddexp(x.narrow(d, k, n - k), prev.narrow(d, k, n - k))
        x = cat([head, tail], d)
        k *= 2
    return x


@returns_values_indices
def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element (1-based) along ``dim``: ``(values, indices)``. Among equal
    values the index is the stable sort's (PyTorch's quickselect may name another of them)."""
    from .sorting import sort

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
    from .indexing import gather

    _check("mode", input)
    x = input.reshape(1) if input.ndim == 0 else input
    d = wrap_dim(dim, x.ndim, "mode")
    if x.shape[d] == 0:
        raise IndexError(f"mode(): expected a non-empty dimension {d}")
    a = np.moveaxis(_host(x), d, -1)
    rows = a.reshape(-1, a.shape[-1])
    idx = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        vals, counts = np.unique(row, return_counts=True)  # sorted: argmax picks the smallest of the most frequent
        best = vals[np.argmax(counts)]
        idx[r] = np.nonzero((row == best) | (np.isnan(row) & np.isnan(best)))[0][-1]
    index = _const(np.moveaxis(idx.reshape(a.shape[:-1] + (1,)), -1, d).copy(), x, "int64")
    v = gather(x, d, index)
    if not keepdim or input.ndim == 0:
        v, index = v.squeeze(d), index.squeeze(d)
    return (v.reshape(()), index.reshape(())) if input.ndim == 0 else (v, index)


_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(fn, input, q, dim, keepdim, interpolation, ignore_nan):
    from .elementwise import where
    from .indexing import gather
    from .reduction import sum as _sum
    from .sorting import sort

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
        last = np.maximum(_host(count).astype(np.float64) - 1, 0)
    else:
        last = np.full(shape, n - 1, dtype=np.float64)
    # q as the input's dtype holds it, the ranks in float64 (PyTorch's: this decides "nearest"
    # and the floor / ceiling where q * (n - 1) lands within a float32 step of an integer)
    qs = _host(_const(qs, x)).astype(np.float64).tolist()
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
        vl = gather(srt, d, _const(lo.astype(np.int64), x, "int64"))
        if interpolation in ("lower", "higher", "nearest"):
            v = vl
        else:
            vh = gather(srt, d, _const(hi.astype(np.int64), x, "int64"))
            w = _const(rank - lo, x) if interpolation == "linear" else _const(0.5, x)
            v = vl + (vh - vl) * w
        if ignore_nan:
            v = where(count == 0, _const(float("nan"), x), v)
        else:
            v = where(nan.any(d, keepdim=True), _const(float("nan"), x), v)
        if not keepdim:
            v = v.squeeze(d)
        elif dim is None:
            v = v.reshape([1] * input.ndim)
        outs.append(v)
    if scalar_q:
        return outs[0]
    from .shape import stack

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
    from .indexing import gather
    from .reduction import sum as _sum
    from .sorting import sort

    _check("nanmedian", input)
    x = input.reshape(-1) if dim is None else (input.reshape(1) if input.ndim == 0 else input)
    d = 0 if dim is None else wrap_dim(dim, x.ndim, "nanmedian")
    if x.shape[d] == 0:
        raise IndexError("nanmedian(): expected a non-empty input")
    v, i = sort(x, d)
    count = _sum(x.isnan().logical_not().to(dtype="int64"), d, True) if x.dtype.is_floating_point else None
    if count is None:
        k = _const((x.shape[d] - 1) // 2, x, "int64").reshape([1] * x.ndim)
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


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (either may be a scalar);
    a bool tensor of ``elements``' shape."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): argument 'elements' or 'test_elements' must be a tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    e = elements if isinstance(elements, Tensor) else _const(elements, like)
    t = test_elements if isinstance(test_elements, Tensor) else _const(test_elements, like)
    if t.numel() == 0:
        from .._creation import full

        hit = full(tuple(e.shape), False, dtype="bool", device=e.device)
    else:
        hit = (e.reshape(*e.shape, 1) == t.reshape(-1)).any(-1)
    return hit.logical_not() if invert else hit


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """For each value of ``input``, the index in ``sorted_sequence`` (sorted on its last axis;
    1-D, or its leading axes matching ``input``'s) where it would be inserted to keep the order:
    before equal values (``side="left"``), after them with ``right=True`` / ``side="right"``.
    ``sorter``: indices sorting an unsorted sequence. A NaN value goes to the end (index n).
    int64, or int32 with ``out_int32``."""
    from .indexing import gather
    from .reduction import sum as _sum

    _check("searchsorted", sorted_sequence, "sorted_sequence")
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted(): argument 'side' must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise ValueError("searchsorted(): argument 'side' and 'right' can't be set to opposites, got side of "
                             "left while right was True")
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        _check("searchsorted", sorter, "sorter")
        if tuple(sorter.shape) != tuple(seq.shape) or sorter.dtype.is_floating_point:
            raise ValueError("searchsorted(): argument 'sorter' must be an integer tensor of sorted_sequence's "
                             f"shape {tuple(seq.shape)}, got {sorter.dtype} {tuple(sorter.shape)}")
        seq = gather(seq, seq.ndim - 1, sorter.to(dtype="int64"))
    scalar = not isinstance(input, Tensor)
    v = _const(input, seq, None if isinstance(input, builtins.float) and not seq.dtype.is_floating_point
               else seq.dtype) if scalar else input
    if seq.ndim == 0:
        raise ValueError("searchsorted(): argument 'sorted_sequence' must have at least 1 dimension")
    if seq.ndim > 1:
        if scalar or v.ndim != seq.ndim or tuple(v.shape[:-1]) != tuple(seq.shape[:-1]):
            raise ValueError("searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                             f"of boundaries tensor and input value tensor must match, got {tuple(seq.shape)} and "
                             f"{tuple(v.shape) if not scalar else ()}")
    if v.numel() * seq.shape[-1] > _COMPARE_LIMIT:  # a binary search on the host instead of the full comparison
        out = _searchsorted_host(seq, v, right)
        return out.to(dtype="int32") if out_int32 else out
    if seq.ndim > 1:
        cmp = seq.unsqueeze(-2)  # (..., 1, n) against (..., m, 1)
    else:
        cmp = seq
    vv = v.unsqueeze(-1)
    below = (cmp <= vv) if right else (cmp < vv)
    if vv.dtype.is_floating_point:  # a NaN value goes after everything, as PyTorch places it
        below = below.logical_or(vv.isnan())
    out = _sum(below.to(dtype="int64"), -1)
    return out.to(dtype="int32") if out_int32 else out


# Up to this many value x boundary comparisons, searchsorted compares on the tensors'
# stream (no host round trip); above it, numpy's binary search (O(m log n)) on the host.
_COMPARE_LIMIT = 1 << 22


def _searchsorted_host(seq, v, right):
    """searchsorted's indices by numpy's binary search, row by row for a batched sequence.
    Half precision is widened to float32 first (exact, so the order is unchanged); numpy
    places a NaN value after everything, as PyTorch does."""
    import numpy as np

    from .._creation import tensor

    def host(t):
        if t.dtype.is_floating_point and t.dtype.name != "float64":
            t = t.to(dtype="float32")
        return t.to("cpu").numpy()

    side = "right" if right else "left"
    s_np, v_np = host(seq), host(v)
    if seq.ndim == 1:
        idx = np.searchsorted(s_np, v_np, side=side)
    else:
        rows, vals = s_np.reshape(-1, s_np.shape[-1]), v_np.reshape(-1, v_np.shape[-1])
        idx = np.stack([np.searchsorted(r, q, side=side) for r, q in zip(rows, vals)]).reshape(v_np.shape)
    return tensor(np.asarray(idx, dtype=np.int64), device=v.device)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value for 1-D sorted ``boundaries``: ``i`` with
    ``boundaries[i-1] < x <= boundaries[i]`` (``<=`` / ``<`` swapped with ``right=True``)."""
    _check("bucketize", boundaries, "boundaries")
    if boundaries.ndim != 1:
        raise ValueError(f"bucketize(): argument 'boundaries' must be a 1-D tensor, got {boundaries.ndim}-D")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


hist_edges = collections.namedtuple("histogram", ["hist", "bin_edges"])
hist_edges.__doc__ = "The (hist, bin_edges) result of histogram, as PyTorch's return_types."


def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """``(hist, bin_edges)`` of a floating tensor. ``bins``: a count of equal bins over ``range``
    (default the input's min and max, widened by 0.5 each way when they are equal; [0, 1] when
    empty), or a 1-D tensor of increasing edges. Bins are half open, the last one closed;
    values outside are not counted. ``weight`` (input's shape) sums weights instead of
    ones; ``density`` divides by the total and the bin widths. Counted on the host."""
    from .._creation import tensor

    _check("histogram", input)
    _float("histogram", input)
    x = _host(input).reshape(-1)
    dt = np.float64 if input.dtype.name == "float64" else np.float32
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.numel() < 1 or not bins.dtype.is_floating_point:
            raise ValueError("histogram(): argument 'bins' as a tensor must be 1-D floating edges, got "
                             f"{bins.dtype} with shape {tuple(bins.shape)}")
        edges = _host(bins).astype(dt)
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
        w = _host(weight).reshape(-1).astype(np.float64)
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


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapses each run of equal consecutive elements (``dim=None``: of the flattened input) or
    equal consecutive slices along ``dim`` into one. Returns the values, then the run index of
    each element / slice (``return_inverse``; input's shape, or its length on ``dim``) and the run
    lengths (``return_counts``), as requested. Found on the host; not differentiable."""
    from .._creation import tensor

    _check("unique_consecutive", input)
    a = _host(input)
    if dim is None:
        flat = a.reshape(-1)
        starts = np.ones(flat.size, dtype=bool)
        starts[1:] = flat[1:] != flat[:-1]
        vals = flat[starts]
        inv_shape = a.shape
    else:
        d = wrap_dim(dim, input.ndim, "unique_consecutive")
        m = np.moveaxis(a, d, 0)
        rows = m.reshape(m.shape[0], -1)
        starts = np.ones(rows.shape[0], dtype=bool)
        if rows.shape[0] > 1:
            starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
        vals = np.moveaxis(m[starts], 0, d)
        inv_shape = (rows.shape[0],)
    run = np.cumsum(starts) - 1
    out = [tensor(np.ascontiguousarray(vals), dtype=input.dtype, device=input.device)]
    if return_inverse:
        out.append(tensor(run.reshape(inv_shape).astype(np.int64), device=input.device))
    if return_counts:
        out.append(tensor(np.diff(np.append(np.flatnonzero(starts), starts.size)).astype(np.int64),
                          device=input.device))
    return out[0] if len(out) == 1 else tuple(out)
