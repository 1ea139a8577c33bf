"""``PerGroupMinMaxObserver``: min / max of each run of ``group_size`` consecutive
weights along ``axis`` (lucid; PyTorch's eager observers have no per-group one).
It backs the ``weight_int4`` qconfig (int4 weight-only models, groups of 32, 64
or 128). Its qparams have the per-group layout of ``quantize(...,
group_size=g, axis=axis)``: the weight's shape with ``axis`` divided by ``g``.

>>> import lucid
>>> import lucid.quantization as Q
>>> obs = Q.PerGroupMinMaxObserver(group_size=2)
>>> _ = obs(lucid.tensor([[1.0, -3.5, 0.5, 0.25]]))
>>> scale, zero_point = obs.calculate_qparams()
>>> scale.shape, scale.tolist(), zero_point.tolist()
((1, 2), [[0.46666666865348816, 0.06666667014360428]], [[0, 0]])
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid._namespace as lucid

from .._creation import zeros
from .observer_base import _EPS, UniformQuantizationObserverBase, _host32
from .qdtype import per_channel_symmetric, qint4

__all__ = ["PerGroupMinMaxObserver"]


class PerGroupMinMaxObserver(UniformQuantizationObserverBase):
    """Running min / max per group of ``group_size`` elements along ``axis`` (default the
    last, a Linear weight's input features), qparams by PyTorch's per-channel formulas
    (``qscheme`` per_channel_symmetric or per_channel_affine, applied per group).

    Default grid qint4 (-8..7), symmetric. ValueError for a ``group_size`` that is not a
    positive int or does not divide the input's ``axis``; other errors as the observers'.
    """

    _per_channel = True
    _resizable_buffers = frozenset({"min_val", "max_val"})

    def __init__(self, group_size=128, axis=-1, dtype=qint4, qscheme=per_channel_symmetric, reduce_range=False,
                 quant_min=None, quant_max=None, eps=_EPS, is_dynamic=False, **kwargs):
        owner = type(self).__name__
        if isinstance(group_size, bool) or not isinstance(group_size, numbers.Integral) or group_size <= 0:
            raise ValueError(f"{owner}(): argument 'group_size' must be a positive int, got {group_size!r}")
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise TypeError(f"{owner}(): argument 'axis' must be an int, got {type(axis).__name__}")
        if is_dynamic:
            raise NotImplementedError(f"{owner}(): dynamic quantization is not supported")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.group_size, self.axis = int(group_size), int(axis)
        self.register_buffer("min_val", zeros(0))
        self.register_buffer("max_val", zeros(0))

    def forward(self, x_orig):
        owner = type(self).__name__
        x = self._check_input(x_orig)
        if x.ndim == 0:
            raise ValueError(f"{owner}.forward(): expected at least one dimension, got a 0-d tensor")
        if not -x.ndim <= self.axis < x.ndim:
            raise ValueError(f"{owner}.forward(): axis={self.axis} is out of range for a {x.ndim}-d input")
        ax = self.axis % x.ndim
        n = x.shape[ax]
        if n % self.group_size:
            raise ValueError(f"{owner}.forward(): group_size={self.group_size} does not divide the input's axis {ax} "
                             f"of length {n}")
        # (..., n, ...) -> (..., n // g, ..., g): groups last, reduced exactly on x's stream.
        moved = lucid.moveaxis(x, ax, -1)
        grouped = moved.reshape(tuple(moved.shape[:-1]) + (n // self.group_size, self.group_size))
        mn, mx, bad = self._extremes(grouped, -1)
        mn = np.moveaxis(mn, -1, ax)
        mx = np.moveaxis(mx, -1, ax)
        cur_min, cur_max = _host32(self.min_val), _host32(self.max_val)
        if cur_min.size and cur_min.shape != mn.shape:
            raise ValueError(f"{owner}.forward(): the observer holds groups of shape {cur_min.shape} but the input "
                             f"gives {mn.shape}; call reset_min_max_vals() first")
        if cur_min.size:
            mn, mx = np.minimum(cur_min, mn), np.maximum(cur_max, mx)
        self._write("min_val", mn.astype(np.float32))
        self._write("max_val", mx.astype(np.float32))
        self._count_nonfinite(bad)
        return x_orig

    def calculate_qparams(self):
        mn, mx = _host32(self.min_val), _host32(self.max_val)
        if mn.size == 0:
            raise self._no_data()
        scale, zp = self._calculate_qparams(mn, mx)
        return scale.reshape(mn.shape), zp.reshape(mn.shape)

    def reset_min_max_vals(self):
        self._write("min_val", np.zeros(0, dtype=np.float32))
        self._write("max_val", np.zeros(0, dtype=np.float32))

    def extra_repr(self):
        return f"group_size={self.group_size}, axis={self.axis}, {self._config_repr()}"
