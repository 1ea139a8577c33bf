"""Clipping observers lucid adds to PyTorch's set: ``PercentileObserver`` and
``MSEObserver``. Both keep a histogram per channel (per tensor: one), built and
re-binned exactly as ``HistogramObserver`` builds its own, and choose a clipping
range from it on the host (docs/numerics.md, "Observers"), so their qparams are
identical on both streams. On heavy-tailed data (weights, activations with
outliers) clipping a few extreme values buys a much finer grid for the rest.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._creation import tensor, zeros
from . import histogram_range_search as _hist
from .histogram_observer import _accumulate
from .observer_base import _EPS, UniformQuantizationObserverBase, _host32, _int_or_none
from .qdtype import as_qscheme, per_tensor_affine, quint8

__all__ = ["PercentileObserver", "MSEObserver"]

_F32 = np.float32


def _edges(m, M, bins: int) -> np.ndarray:
    """Bin edges ``fl(m + fl(w * i))`` with ``w = fl(fl(M - m) / bins)``; over a wide range
    (``fl(M - m)`` overflows float32) ``w`` is ``width32``'s (the halved range's width,
    doubled) and each edge ``halved_edge``'s, so no edge overflows and a range scaled by a
    power of two gets its edges scaled alike (docs/numerics.md)."""
    m, M = _F32(m), _F32(M)
    w = _hist.width32(m, M, bins)
    if not _hist.is_wide(m, M):
        e = (m + (_F32(w) * np.arange(bins + 1, dtype=_F32)).astype(_F32)).astype(_F32)
    else:
        e = np.array([_hist.halved_edge(m, w, i) for i in range(bins + 1)], dtype=_F32)
    e[-1] = M
    return e


class _ClippingObserverBase(UniformQuantizationObserverBase):
    """Per-tensor or per-channel (by ``qscheme``) histograms of ``bins`` bins; the
    subclass's ``_clip(hist, m, M)`` picks the range each channel is quantized over."""

    def __init__(self, bins=2048, ch_axis=0, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, eps=_EPS, is_dynamic=False, upsample_rate=16, **kwargs):
        owner = type(self).__name__
        if is_dynamic:
            raise NotImplementedError(f"{owner}(): dynamic quantization is not supported")
        per_channel = as_qscheme(qscheme, owner, "qscheme").is_per_channel
        self.__dict__["_per_channel"] = per_channel
        b = _int_or_none(bins, owner, "bins")
        if b is None or not 1 <= b <= 2**24:
            raise ValueError(f"{owner}(): argument 'bins' must be an int in [1, 2^24], got {bins!r}")
        u = _int_or_none(upsample_rate, owner, "upsample_rate")
        if u is None or not 1 <= u <= 1024:
            raise ValueError(f"{owner}(): argument 'upsample_rate' must be an int in [1, 1024], got {upsample_rate!r}")
        ch = _int_or_none(ch_axis, owner, "ch_axis")
        if ch is None:
            raise TypeError(f"{owner}(): argument 'ch_axis' must be an int, got None")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.bins, self.upsample_rate, self.ch_axis = b, u, ch
        if per_channel:
            self._resizable_buffers = frozenset({"min_val", "max_val", "histogram"})
            self.register_buffer("histogram", zeros(0, b))
            self.register_buffer("min_val", zeros(0))
            self.register_buffer("max_val", zeros(0))
        else:
            self.register_buffer("histogram", zeros(b))
            self.register_buffer("min_val", tensor(float("inf")))
            self.register_buffer("max_val", tensor(float("-inf")))

    def forward(self, x_orig):
        x = self._check_input(x_orig)
        if x.numel() == 0:
            return x_orig
        if not self._per_channel:
            mn, mx, bad = self._extremes(x, None)
            if mn <= mx:
                hist, lo, hi = _accumulate(_host32(self.histogram), _host32(self.min_val), _host32(self.max_val), x,
                                           mn, mx, self.bins, self.upsample_rate)
                self._write("histogram", hist)
                self._write("min_val", lo)
                self._write("max_val", hi)
            self._count_nonfinite(bad)
            return x_orig
        owner = type(self).__name__
        if x.ndim == 0:
            raise ValueError(f"{owner}.forward(): a per-channel observer needs at least one dimension")
        if not -x.ndim <= self.ch_axis < x.ndim:
            raise ValueError(f"{owner}.forward(): ch_axis={self.ch_axis} is out of range for a {x.ndim}-d input")
        ch = self.ch_axis % x.ndim
        mn, mx, bad = self._extremes(x, tuple(d for d in range(x.ndim) if d != ch))
        channels = mn.shape[0]
        cur_min, cur_max, hist = _host32(self.min_val), _host32(self.max_val), _host32(self.histogram)
        if cur_min.size == 0:
            cur_min = np.full(channels, np.inf, dtype=_F32)
            cur_max = np.full(channels, -np.inf, dtype=_F32)
            hist = np.zeros((channels, self.bins), dtype=_F32)
        elif cur_min.shape[0] != channels:
            raise ValueError(f"{owner}.forward(): the observer holds {cur_min.shape[0]} channel(s) but the input has "
                             f"{channels} along ch_axis={self.ch_axis}; call reset_min_max_vals() first")
        new_min, new_max, new_hist = cur_min.copy(), cur_max.copy(), hist.copy()
        for c in range(channels):
            if mn[c] <= mx[c]:  # a channel with nothing finite (ignore_nonfinite) keeps its state
                new_hist[c], new_min[c], new_max[c] = _accumulate(hist[c], cur_min[c], cur_max[c], x.select(ch, c),
                                                                  mn[c], mx[c], self.bins, self.upsample_rate)
        self._write("histogram", new_hist)
        self._write("min_val", new_min)
        self._write("max_val", new_max)
        self._count_nonfinite(bad)
        return x_orig

    def calculate_qparams(self):
        mn, mx, hist = _host32(self.min_val), _host32(self.max_val), _host32(self.histogram)
        if mn.size == 0 or not np.any(mn <= mx):
            raise self._no_data()
        if not self._per_channel:
            lo, hi = self._clip(hist, mn, mx)
            return self._calculate_qparams(lo, hi)
        los, his = np.empty_like(mn), np.empty_like(mx)
        for c in range(mn.shape[0]):
            los[c], his[c] = self._clip(hist[c], mn[c], mx[c]) if mn[c] <= mx[c] else (mn[c], mx[c])
        return self._calculate_qparams(los, his)

    def reset_min_max_vals(self):
        """Forgets what was seen."""
        if self._per_channel:
            self._write("histogram", np.zeros((0, self.bins), dtype=_F32))
            self._write("min_val", np.zeros(0, dtype=_F32))
            self._write("max_val", np.zeros(0, dtype=_F32))
        else:
            self._write("histogram", np.zeros(self.bins, dtype=_F32))
            self._write("min_val", _F32(np.inf))
            self._write("max_val", _F32(-np.inf))

    def extra_repr(self):
        return f"bins={self.bins}, ch_axis={self.ch_axis}, {self._config_repr()}"


class PercentileObserver(_ClippingObserverBase):
    """Clips at the ``percentile`` (e.g. 99.99) of ``|x|`` (``mode="abs"``: a symmetric
    cut) or of each tail (``mode="tails"``: the lower cut at ``100 - percentile``), read
    from the running histogram; per tensor or per channel (by ``qscheme``).

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> obs = Q.PercentileObserver(percentile=90.0, dtype=Q.qint8, qscheme=Q.per_tensor_symmetric, bins=100)
    >>> _ = obs(lucid.arange(0, 100).float().reshape(1, 100))
    >>> round(obs.calculate_qparams()[0].item() * 127.5, 4)
    89.1
    """

    def __init__(self, percentile=99.99, mode="abs", bins=2048, ch_axis=0, dtype=quint8, qscheme=per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=_EPS, upsample_rate=16, **kwargs):
        owner = type(self).__name__
        if not isinstance(percentile, numbers.Real) or isinstance(percentile, bool) or not 0 < percentile <= 100:
            raise ValueError(f"{owner}(): argument 'percentile' must be a number in (0, 100], got {percentile!r}")
        if mode not in ("abs", "tails"):
            raise ValueError(f"{owner}(): argument 'mode' must be 'abs' or 'tails', got {mode!r}")
        if mode == "tails" and percentile < 50:
            raise ValueError(f"{owner}(): mode='tails' needs percentile >= 50, got {percentile!r}")
        super().__init__(bins=bins, ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, upsample_rate=upsample_rate, **kwargs)
        self.percentile, self.mode = float(percentile), mode

    def _clip(self, hist, m, M):
        m, M = _F32(m), _F32(M)
        if m == M:
            return m, M
        e = _edges(m, M, hist.shape[0])
        counts = hist.astype(np.float64)
        total = counts.sum()
        if self.mode == "abs":
            key = np.maximum(np.abs(e[:-1]), np.abs(e[1:]))
            order = np.argsort(key, kind="stable")
            k = int(np.searchsorted(np.cumsum(counts[order]), self.percentile / 100 * total, side="left"))
            t = key[order[min(k, key.shape[0] - 1)]]
            return max(m, _F32(-t)), min(M, t)
        cum = np.cumsum(counts)
        i = int(np.searchsorted(cum, (100 - self.percentile) / 100 * total, side="left"))
        j = int(np.searchsorted(cum, self.percentile / 100 * total, side="left"))
        lo, hi = e[min(i, hist.shape[0] - 1)], e[min(j, hist.shape[0] - 1) + 1]
        return lo, max(hi, lo)

    def extra_repr(self):
        return f"percentile={self.percentile}, mode={self.mode!r}, " + super().extra_repr()


class MSEObserver(_ClippingObserverBase):
    """Searches ``num_candidates`` clipping ranges ``[k/K * min(m, 0), k/K * max(M, 0)]``
    and keeps the one whose quantize -> dequantize error (squared, weighted by the
    histogram) is least; per tensor or per channel (by ``qscheme``).

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> obs = Q.MSEObserver(dtype=Q.qint8, qscheme=Q.per_tensor_symmetric)
    >>> _ = obs(lucid.cat([lucid.linspace(-1, 1, 100000), lucid.tensor([100.0])]))  # one outlier
    >>> round(obs.calculate_qparams()[0].item() * 127.5, 3)  # clips at 59, MinMax would keep 100
    59.0
    """

    def __init__(self, num_candidates=100, bins=2048, ch_axis=0, dtype=quint8, qscheme=per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=_EPS, upsample_rate=16, **kwargs):
        owner = type(self).__name__
        k = _int_or_none(num_candidates, owner, "num_candidates")
        if k is None or not 1 <= k <= 10000:
            raise ValueError(f"{owner}(): argument 'num_candidates' must be an int in [1, 10000], got "
                             f"{num_candidates!r}")
        super().__init__(bins=bins, ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, upsample_rate=upsample_rate, **kwargs)
        self.num_candidates = k

    def _clip(self, hist, m, M):
        m, M = _F32(m), _F32(M)
        if m == M:
            return m, M
        bins = hist.shape[0]
        e = _edges(m, M, bins)
        w = _hist.width32(m, M, bins)
        centres = (e[:-1] + _F32(w * 0.5)).astype(_F32)
        keep = hist > 0
        centres, counts = centres[keep], hist[keep].astype(np.float64)
        K = self.num_candidates
        frac = (np.arange(1, K + 1, dtype=np.float64) / K).astype(_F32)
        lo = (min(m, _F32(0)) * frac).astype(_F32)
        hi = (max(M, _F32(0)) * frac).astype(_F32)
        scale, zp = self._qparams_arrays(lo, hi)
        s = scale.astype(_F32)[:, None]
        z = zp.astype(_F32)[:, None]
        q = np.clip((np.rint((centres[None, :] / s).astype(_F32)) + z).astype(_F32), _F32(self.quant_min),
                    _F32(self.quant_max))
        with np.errstate(over="ignore"):
            y = ((q - z).astype(_F32) * s).astype(_F32)
        d = (y - centres[None, :]).astype(np.float64)
        over = ~np.isfinite(y)
        if over.any():  # near the float32 maximum: the dequantized value where it overflows, in float64
            y64 = (q - z).astype(np.float64) * s.astype(np.float64)
            d = np.where(over, y64 - centres[None, :].astype(np.float64), d)
        # Sequential float64 sums in bin order (np.cumsum never reorders), the same on every host.
        err = np.cumsum(d * d * counts[None, :], axis=1)[:, -1]
        best = int(np.argmin(err))
        return lo[best], hi[best]

    def extra_repr(self):
        return f"num_candidates={self.num_candidates}, " + super().extra_repr()
