"""Host-side arithmetic of ``HistogramObserver`` (docs/numerics.md, "Observers"):
re-binning a histogram onto a wider range and PyTorch's L2-error range search.

Everything here is float32 numpy in one fixed order (float64 only where PyTorch
itself accumulates in double or where a Python float is used), so the result
does not depend on the stream that produced the counts.

Wide ranges (docs/numerics.md, "Wide ranges"): where PyTorch's float32 formula
would overflow on finite data (a width ``hi - lo`` above the float32 maximum,
or the L2 error's cubes of bin widths), the same quantities are computed
without overflow: widths as float64 differences rounded once, edges as float64
sums rounded once, and the L2 errors on the range scaled by a power of two
(exact: every decision compares errors that all scale alike). Ordinary ranges
take exactly PyTorch's operations.
"""
from __future__ import annotations

import math

import numpy as np

_F32 = np.float32
_F64 = np.float64


def width32(lo, hi, parts: int):
    """``fl(fl(hi - lo) / parts)`` (PyTorch's), or when ``fl(hi - lo)`` overflows float32 (a
    wide range) ``2 * fl(fl(fl(hi * 0.5) - fl(lo * 0.5)) / parts)``: the same operations on the
    halved range, so a range scaled by a power of two gets the width scaled alike. Returned as
    a float64 (the doubled value may exceed the float32 maximum when ``parts`` is 1)."""
    lo, hi = _F32(lo), _F32(hi)
    with np.errstate(over="ignore"):
        d = _F32(hi - lo)
    if np.isfinite(d):
        return _F64(_F32(d / _F32(parts)))
    half = _F32(_F32(hi * _F32(0.5)) - _F32(lo * _F32(0.5)))
    return _F64(2.0) * _F64(_F32(half / _F32(parts)))


def halved_edge(lo, width, i):
    """A wide range's ``lo + width * i`` (``width`` from ``width32``): ``2 * fl(fl(lo * 0.5) +
    fl(fl(width * 0.5) * i))``, the ordinary ``fl(lo + fl(width * i))`` on the halved range,
    doubled; the float32 maximum where the doubling would pass it."""
    half = _F32(_F32(_F32(lo) * _F32(0.5)) + _F32(_F32(width * 0.5) * _F32(i)))
    return _F32(min(2.0 * float(half), float(np.finfo(_F32).max)))


def is_wide(lo, hi) -> bool:
    """Whether ``fl(hi - lo)`` overflows float32 (finite ``lo < hi``)."""
    with np.errstate(over="ignore"):
        return not np.isfinite(_F32(_F32(hi) - _F32(lo)))


def linspace32(start, end, steps: int) -> np.ndarray:
    """PyTorch's CPU float32 ``linspace``: ``step = fl(fl(end - start) / (steps - 1))``; the
    first half is ``start + step * i`` and the second ``end - step * (steps - 1 - i)``, each
    with one rounding (PyTorch's kernel is compiled with contraction into a fused
    multiply-add; ``step * i`` is exact in float64, so the float64 sum rounded to float32
    reproduces it)."""
    start, end = _F32(start), _F32(end)
    if steps == 1:
        return np.array([start], dtype=_F32)
    step = width32(start, end, steps - 1)  # PyTorch's fl(fl(end - start) / (steps - 1)) unless that overflows
    idx = np.arange(steps)
    low = idx < steps // 2
    k = np.where(low, idx, steps - 1 - idx).astype(_F64)
    prod = step * k
    return np.where(low, (_F64(start) + prod).astype(_F32), (_F64(end) - prod).astype(_F32))


def bin_index(values: np.ndarray, lo, hi, bins: int) -> np.ndarray:
    """The histc bin index of in-range ``values`` (float32), capped at B - 1: for an ordinary
    range trunc(fl(fl(x - lo) * B) / fl(hi - lo)); when fl(fl(hi - lo) * B) overflows, the
    wide-range formula (halved operands, the difference scaled by 2^-24), as the op does."""
    lo, hi = _F32(lo), _F32(hi)
    v = values.astype(_F32)
    nb = _F32(bins)
    with np.errstate(over="ignore"):
        wide = not np.isfinite(_F32(_F32(hi - lo) * nb))
    if not wide:
        t = ((v - lo).astype(_F32) * nb).astype(_F32) / _F32(hi - lo)
    else:
        lo_h, hi_h, sc = _F32(lo * _F32(0.5)), _F32(hi * _F32(0.5)), _F32(2.0**-24)
        den = _F32(_F32(hi_h - lo_h) * sc)
        d = ((v * _F32(0.5)).astype(_F32) - lo_h).astype(_F32)
        t = (((d * sc).astype(_F32) * nb).astype(_F32) / den).astype(_F32)
    return np.minimum(np.trunc(t.astype(_F32)).astype(np.int64), bins - 1)


def widen_if_flat(lo, hi):
    """histc's edges: a zero-width range [c, c] becomes [c - 1, c + 1] (float32)."""
    lo, hi = _F32(lo), _F32(hi)
    if lo == hi:
        return _F32(lo - _F32(1)), _F32(hi + _F32(1))
    return lo, hi


def upscale(hist, orig_min, orig_max, new_min, new_max, upsample_rate: int) -> np.ndarray:
    """``hist`` over [orig_min, orig_max] re-binned onto [new_min, new_max] (same bin count):
    each bin split into ``upsample_rate`` parts of equal weight, each part moved to the bin
    holding its midpoint (PyTorch's ``_upscale_histogram``)."""
    bins = hist.shape[0]
    n = bins * upsample_rate
    fine = (np.repeat(hist.astype(_F32), upsample_rate) / _F32(upsample_rate)).astype(_F32)
    bin_size = width32(orig_min, orig_max, n)
    mids = (linspace32(orig_min, orig_max, n + 1)[:-1] + _F32(0.5 * bin_size)).astype(_F32)
    edges = linspace32(new_min, new_max, bins + 1)
    bucket = np.clip(np.searchsorted(edges, mids, side="right") - 1, 0, bins - 1)
    out = np.zeros(bins, dtype=_F32)
    np.add.at(out, bucket, fine)  # float32, in index order, as bincount accumulates
    return out


def _norm(delta_begin, delta_end, density):
    """``density * (end^3 - begin^3) / 3`` in float32, PyTorch's operation order."""
    e3 = ((delta_end * delta_end).astype(_F32) * delta_end).astype(_F32)
    b3 = ((delta_begin * delta_begin).astype(_F32) * delta_begin).astype(_F32)
    return (density * (((e3 - b3).astype(_F32)) / _F32(3)).astype(_F32)).astype(_F32)


def _sum32(v: np.ndarray) -> float:
    """The float32 sum of the per-bin errors: exactly rounded (math.fsum) to float32.
    PyTorch sums in float32 in its own vectorised order; see docs/numerics.md."""
    return float(_F32(math.fsum(v.astype(_F64).tolist())))


def error_scale(min_val, max_val, bins: int) -> float:
    """The power of two the L2 errors are computed at: 1 for bin widths up to 1 (PyTorch's
    own arithmetic), else 2^-e bringing the bin width into [1, 2), so no cube overflows
    float32. Scaling by a power of two commutes with every rounding there, so the errors'
    order, and the chosen range, are those of float32 with an unbounded exponent."""
    bin_width = (float(max_val) - float(min_val)) / bins
    if not bin_width > 1.0:
        return 1.0
    return math.ldexp(1.0, -(math.frexp(bin_width)[1] - 1))


def quantization_error(hist, min_val: float, max_val: float, start: int, end: int, dst_nbins: int,
                       scale: float = 1.0) -> float:
    """PyTorch's ``_compute_quantization_error``: the L2 error of quantizing the histogram
    onto ``dst_nbins`` levels spanning bins [start, end] (``scale``: a power of two the bin
    width is multiplied by, see ``error_scale``)."""
    bins = hist.shape[0]
    bin_width = (float(max_val) - float(min_val)) / bins * scale  # Python floats, as PyTorch
    dst_w = bin_width * (end - start + 1) / dst_nbins
    if dst_w == 0.0:
        return 0.0
    bw32, dw32 = _F32(bin_width), _F32(dst_w)
    src_begin = (np.arange(bins, dtype=np.int64) - start).astype(_F32) * bw32
    src_begin = src_begin.astype(_F32)
    src_end = (src_begin + bw32).astype(_F32)
    top = _F32(dst_nbins - 1)
    d_begin = np.clip(np.floor_divide(src_begin, dw32), _F32(0), top).astype(_F32)
    d_begin_center = ((d_begin + _F32(0.5)).astype(_F32) * dw32).astype(_F32)
    d_end = np.clip(np.floor_divide(src_end, dw32), _F32(0), top).astype(_F32)
    density = (hist.astype(_F32) / bw32).astype(_F32)
    half = _F32(dst_w / 2)
    norm = _norm((src_begin - d_begin_center).astype(_F32), np.full(bins, half, dtype=_F32), density)
    inner = _norm(_F32(-dst_w / 2), _F32(dst_w / 2), density)
    norm = (norm + (((d_end - d_begin).astype(_F32) - _F32(1)).astype(_F32) * inner).astype(_F32)).astype(_F32)
    d_end_center = ((d_end * dw32).astype(_F32) + half).astype(_F32)
    norm = (norm + _norm(_F32(-dst_w / 2), (src_end - d_end_center).astype(_F32), density)).astype(_F32)
    return _sum32(norm)


def l2_range_search(hist, min_val, max_val, dst_nbins: int):
    """PyTorch's ``_non_linear_param_search``: shrink [min_val, max_val] from the tail
    with fewer counts, 1e-5 of the total mass per step, while the L2 quantization error
    does not grow. Returns the new (min, max) as float32."""
    bins = hist.shape[0]
    mn, mx = _F32(min_val), _F32(max_val)
    if mn == mx:
        # Zero-width bins: every candidate error is 0 and every candidate range is
        # [mn + 0 * start, mn + 0 * (end + 1)] = [mn, mx]; skip the 10^5 idle steps.
        return mn, mx
    bin_width = width32(mn, mx, bins)
    escale = error_scale(mn, mx, bins)
    total = float(_F32(math.fsum(hist.astype(_F64).tolist())))
    csum = np.cumsum(hist.astype(_F64)).astype(_F32)  # PyTorch's cumsum accumulates in double
    stepsize = 1e-5
    alpha, beta = 0.0, 1.0
    start, end = 0, bins - 1
    norm_min = math.inf
    while alpha < beta:
        next_alpha = alpha + stepsize
        next_beta = beta - stepsize
        # first l >= start with csum[l] >= next_alpha * total (or end); csum is non-decreasing
        l = int(np.searchsorted(csum, _F32(next_alpha * total), side="left"))
        l = min(max(l, start), end)
        # last r <= end with csum[r] <= next_beta * total (or start)
        r = int(np.searchsorted(csum, _F32(next_beta * total), side="right")) - 1
        r = max(min(r, end), start)
        next_start, next_end = start, end
        if (l - start) > (end - r):
            next_start = l
            alpha = next_alpha
        else:
            next_end = r
            beta = next_beta
        if next_start == start and next_end == end:
            continue
        norm = quantization_error(hist, float(mn), float(mx), next_start, next_end, dst_nbins, escale)
        if norm > norm_min:
            break
        norm_min = norm
        start, end = next_start, next_end
    if not is_wide(mn, mx):
        bw = _F32(bin_width)
        new_min = _F32(mn + _F32(bw * _F32(start)))
        new_max = _F32(mn + _F32(bw * _F32(end + 1)))
    else:  # fl(bin_width * i) may overflow: the same operations on the halved range, doubled
        new_min = halved_edge(mn, bin_width, start)
        new_max = halved_edge(mn, bin_width, end + 1)
    return new_min, new_max
