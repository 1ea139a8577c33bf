"""``HistogramObserver``: PyTorch's histogram observer (2048 bins, re-binning with an
upsample rate, and the L2-error range search), with its qparams equal to PyTorch's
and identical on both streams. The counting runs on the input's stream (the exact
``histc`` op); the float arithmetic is in ``histogram_range_search`` (docs/numerics.md,
"Observers"). ``_accumulate`` is shared with the clipping observers. Any finite data
works, up to the float32 maximum: where PyTorch's float32 formulas would overflow, the
documented wide-range forms take over ("Wide ranges in the host arithmetic").
"""
from __future__ import annotations

import math

import numpy as np

from .. import _C
from .._creation import tensor, zeros
from .._tensor import Tensor
from . import histogram_range_search as _hist
from .observer_base import _EPS, _F32, UniformQuantizationObserverBase, _host32, _int_or_none
from .qdtype import per_tensor_affine, quint8

__all__ = ["HistogramObserver"]


def _histc_counts(x: Tensor, bins: int, lo, hi) -> np.ndarray:
    """Exact int64 counts of ``x`` over [lo, hi] on ``x``'s stream (the ``histc`` op), as float32."""
    lo, hi = _hist.widen_if_flat(lo, hi)
    counts = np.asarray(_C.histc(x._impl, int(bins), float(lo), float(hi)).to("cpu").numpy())
    return counts.astype(_F32)


def _accumulate(hist, cur_min, cur_max, x: Tensor, mn, mx, bins: int, upsample_rate: int):
    """One batch ``x`` (finite extremes ``mn`` / ``mx``) added to the running histogram
    ``hist`` over [cur_min, cur_max] (+inf / -inf: empty), as PyTorch's HistogramObserver
    does: the batch is counted over the combined range and the old histogram re-binned
    onto it when the range grew. Returns (histogram, new_min, new_max)."""
    mn, mx = _F32(mn), _F32(mx)
    cur_min, cur_max = _F32(cur_min), _F32(cur_max)
    if cur_min == np.inf or cur_max == -np.inf:
        return _histc_counts(x, bins, mn, mx), mn, mx
    if hist.shape[0] != bins:
        raise ValueError(f"the histogram has {hist.shape[0]} bins, expected {bins}")
    new_min, new_max = min(cur_min, mn), max(cur_max, mx)
    update = _histc_counts(x, bins, new_min, new_max)
    if new_min == cur_min and new_max == cur_max:
        return (hist + update).astype(_F32), new_min, new_max
    if cur_min == cur_max:
        # All earlier data sat at one value: its whole mass goes to that value's bin.
        old = np.zeros(bins, dtype=_F32)
        lo, hi = _hist.widen_if_flat(new_min, new_max)
        old[_hist.bin_index(np.array([cur_min], dtype=_F32), lo, hi, bins)[0]] = _F32(
            math.fsum(hist.astype(np.float64).tolist()))
    else:
        old = _hist.upscale(hist, cur_min, cur_max, new_min, new_max, upsample_rate)
    return (update + old).astype(_F32), new_min, new_max


class HistogramObserver(UniformQuantizationObserverBase):
    """A running histogram (``bins`` bins over the running [min, max]) and PyTorch's
    L2-error range search: ``calculate_qparams`` picks the sub-range whose quantization
    onto the dtype's 2^bits levels has the least L2 error, so outliers are clipped.

    A batch that widens the range re-bins the old histogram (each bin split into
    ``upsample_rate`` parts). Buffers: ``histogram`` (float32 counts), ``min_val``,
    ``max_val``, ``eps``. Per tensor only.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> obs = Q.HistogramObserver()
    >>> _ = obs(lucid.tensor([[0.0, 1.0, 2.0, 3.0]]))
    >>> [round(v, 6) for v in obs.calculate_qparams()[0].tolist()], obs.calculate_qparams()[1].tolist()
    ([0.011759], [0])
    """

    _symmetric_reduced_quint8 = True  # PyTorch accepts this combination here (not for MinMax)

    def __init__(self, bins=2048, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=_EPS, is_dynamic=False, upsample_rate=16, **kwargs):
        owner = type(self).__name__
        if is_dynamic:
            raise NotImplementedError(f"{owner}(): dynamic quantization is not supported")
        b = _int_or_none(bins, owner, "bins")
        if b is None or not 1 <= b <= 2**24:
            raise ValueError(f"{owner}(): argument 'bins' must be an int in [1, 2^24], got {bins!r}")
        u = _int_or_none(upsample_rate, owner, "upsample_rate")
        if u is None or not 1 <= u <= 1024:
            raise ValueError(f"{owner}(): argument 'upsample_rate' must be an int in [1, 1024], got {upsample_rate!r}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.bins = b
        self.upsample_rate = u
        self.dst_nbins = 2 ** self.dtype.bits  # PyTorch: 2 ** bits of the dtype, whatever the custom range
        self.register_buffer("histogram", zeros(b))
        self.register_buffer("min_val", tensor(float("inf")))
        self.register_buffer("max_val", tensor(float("-inf")))

    def forward(self, x_orig):
        x = self._check_input(x_orig)
        if x.numel() == 0:
            return x_orig
        mn, mx, bad = self._extremes(x, None)
        if mn <= mx:
            hist, new_min, new_max = _accumulate(_host32(self.histogram), _host32(self.min_val),
                                                 _host32(self.max_val), x, mn, mx, self.bins, self.upsample_rate)
            self._write("histogram", hist)
            self._write("min_val", new_min)
            self._write("max_val", new_max)
        self._count_nonfinite(bad)
        return x_orig

    def calculate_qparams(self):
        mn, mx = _F32(_host32(self.min_val)), _F32(_host32(self.max_val))
        if mn == np.inf and mx == -np.inf:
            raise self._no_data()
        hist = _host32(self.histogram)
        if hist.shape[0] != self.bins:
            raise ValueError(f"{type(self).__name__}.calculate_qparams(): the histogram has {hist.shape[0]} bins, "
                             f"expected {self.bins}")
        new_min, new_max = _hist.l2_range_search(hist, mn, mx, self.dst_nbins)
        return self._calculate_qparams(new_min, new_max)

    def reset_min_max_vals(self):
        """Forgets what was seen (empty histogram, ``min_val`` = +inf, ``max_val`` = -inf)."""
        self._write("histogram", np.zeros(self.bins, dtype=_F32))
        self._write("min_val", _F32(np.inf))
        self._write("max_val", _F32(-np.inf))

    def extra_repr(self):
        return (f"min_val={self.min_val.item()}, max_val={self.max_val.item()}, bins={self.bins}, "
                f"upsample_rate={self.upsample_rate}, {self._config_repr()}")
