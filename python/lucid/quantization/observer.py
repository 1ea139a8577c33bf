"""Observers: modules that watch the tensors flowing through them and turn what
they saw into a scale and zero point, with PyTorch's ``torch.ao.quantization``
constructors, defaults and qparams (docs/numerics.md, "Observers").

The statistics are reduced on the input's own stream with exact lucid ops
(min / max, integer counts); everything that rounds (moving averages, the
qparams formulas, the histogram search) runs on the host in float32 in a fixed
order, so both streams give bit-identical qparams.

>>> import lucid
>>> import lucid.quantization as Q
>>> obs = Q.MinMaxObserver(dtype=Q.quint8)
>>> _ = obs(lucid.tensor([-1.0, 0.5, 3.0]))
>>> scale, zero_point = obs.calculate_qparams()
>>> round(scale.item(), 7), zero_point.item()
(0.0156863, 64)
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtype
from .._creation import tensor, zeros
from .._tensor import Tensor
from .clipping_observers import MSEObserver, PercentileObserver
from .histogram_observer import HistogramObserver
from .observer_base import (_EPS, _F32, ObserverBase, UniformQuantizationObserverBase, _any_dtype, _host32,
                            _int_or_none, _observer_qdtype, _quant_range)
from .qdtype import QDtype, QScheme, as_qscheme, per_channel_affine, per_tensor_affine, quint8

__all__ = ["ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver", "MovingAverageMinMaxObserver",
           "PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver", "HistogramObserver", "FixedQParamsObserver",
           "PlaceholderObserver", "NoopObserver", "RecordingObserver", "PercentileObserver", "MSEObserver",
           "default_observer", "default_placeholder_observer", "default_debug_observer",
           "default_weight_observer", "weight_observer_range_neg_127_to_127", "default_histogram_observer", "default_per_channel_weight_observer",
           "per_channel_weight_observer_range_neg_127_to_127", "default_dynamic_quant_observer",
           "default_fixed_qparams_range_neg1to1_observer", "default_fixed_qparams_range_0to1_observer",
           "default_symmetric_fixed_qparams_observer", "default_affine_fixed_qparams_observer"]

# PyTorch's private name of the uniform base.
_ObserverBase = UniformQuantizationObserverBase


# ----- min / max ------------------------------------------------------------------------
class MinMaxObserver(UniformQuantizationObserverBase):
    """Running minimum and maximum of everything seen; qparams from ``[min, max]``.

    Buffers ``min_val`` / ``max_val`` (0-d, +inf / -inf until data arrives) and ``eps``.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> obs = Q.MinMaxObserver(dtype=Q.qint8, qscheme=Q.per_tensor_symmetric)
    >>> _ = obs(lucid.tensor([-2.0, 1.0]))
    >>> [t.tolist() for t in obs.calculate_qparams()]
    [[0.01568627543747425], [0]]
    """

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps=_EPS, is_dynamic=False, **kwargs):
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.register_buffer("min_val", tensor(float("inf")))
        self.register_buffer("max_val", tensor(float("-inf")))

    def _update(self, cur_min, cur_max, seen_min, seen_max):
        return np.minimum(cur_min, seen_min), np.maximum(cur_max, seen_max)

    def forward(self, x_orig):
        x = self._check_input(x_orig)
        if x.numel() == 0:
            return x_orig
        mn, mx, bad = self._extremes(x, None)
        if mn <= mx:  # something finite was seen
            new_min, new_max = self._update(_host32(self.min_val), _host32(self.max_val), mn, mx)
            self._write("min_val", new_min)
            self._write("max_val", new_max)
        self._count_nonfinite(bad)
        return x_orig

    def calculate_qparams(self):
        mn, mx = _host32(self.min_val), _host32(self.max_val)
        if mn.size == 0 or (mn == np.inf and mx == -np.inf):
            raise self._no_data()
        return self._calculate_qparams(mn, mx)

    def extra_repr(self):
        return f"min_val={self.min_val.item()}, max_val={self.max_val.item()}, {self._config_repr()}"

    def reset_min_max_vals(self):
        """Forgets what was seen: ``min_val`` = +inf, ``max_val`` = -inf."""
        self._write("min_val", _F32(np.inf))
        self._write("max_val", _F32(-np.inf))


def _moving_average(m, cur, c):
    """``m + c * (cur - m)`` in float32, three roundings, as PyTorch computes it (docs/numerics.md)."""
    d = (cur - m).astype(_F32)
    p = (_F32(c) * d).astype(_F32)
    return (m + p).astype(_F32)


def _check_averaging_constant(c, owner):
    if not isinstance(c, numbers.Real) or isinstance(c, bool) or not 0 < c <= 1:
        raise ValueError(f"{owner}(): argument 'averaging_constant' must be a number in (0, 1], got {c!r}")
    return float(c)


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Exponential moving averages of each batch's min and max:
    ``m = m + averaging_constant * (batch_min - m)`` (the first batch sets them).

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> obs = Q.MovingAverageMinMaxObserver(averaging_constant=0.5)
    >>> _ = obs(lucid.tensor([0.0, 2.0])); _ = obs(lucid.tensor([0.0, 4.0]))
    >>> obs.max_val.item()
    3.0
    """

    def __init__(self, averaging_constant=0.01, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, eps=_EPS, is_dynamic=False, **kwargs):
        self_name = type(self).__name__
        if isinstance(averaging_constant, QScheme):
            # upstream lucid's positional order (qscheme, qdtype, averaging_constant, eps)
            averaging_constant, dtype, qscheme, reduce_range, eps = (
                qscheme if isinstance(qscheme, numbers.Real) else 0.01,
                dtype if isinstance(dtype, QDtype) else quint8, averaging_constant, False,
                reduce_range if isinstance(reduce_range, numbers.Real) and not isinstance(reduce_range, bool)
                else eps)
        c = _check_averaging_constant(averaging_constant, self_name)
        if is_dynamic and c != 1:
            raise NotImplementedError(f"{self_name}(): dynamic quantization needs averaging_constant=1, got {c}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = c

    def _update(self, cur_min, cur_max, seen_min, seen_max):
        if cur_min == np.inf and cur_max == -np.inf:
            return seen_min, seen_max
        return (_moving_average(cur_min, seen_min, self.averaging_constant),
                _moving_average(cur_max, seen_max, self.averaging_constant))


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """Running minimum and maximum of each slice along ``ch_axis``; per-channel qparams.

    ``min_val`` / ``max_val`` are empty until the first batch, then hold one value per
    channel; ``load_state_dict`` accepts states of any channel count (as PyTorch's does).

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> obs = Q.PerChannelMinMaxObserver(ch_axis=0, dtype=Q.qint8, qscheme=Q.per_channel_symmetric)
    >>> _ = obs(lucid.tensor([[-1.0, 0.5], [0.0, 2.55]]))
    >>> obs.calculate_qparams()[0].tolist()
    [0.007843137718737125, 0.019999999552965164]
    """

    _per_channel = True
    _resizable_buffers = frozenset({"min_val", "max_val"})

    def _check_state(self, prefix: str, state: dict, problems: list) -> None:
        # the two statistics are resized to whatever the checkpoint holds, so they must agree
        mn, mx = state.get(prefix + "min_val"), state.get(prefix + "max_val")
        shapes = [tuple(v.shape) if isinstance(v, Tensor) else None for v in (mn, mx)]
        if None not in shapes and shapes[0] != shapes[1]:
            problems.append(f"{prefix}min_val / {prefix}max_val: a per-channel observer needs one min and one max per "
                            f"channel (two tensors of one shape), the checkpoint holds shapes {shapes[0]} and "
                            f"{shapes[1]}")
        for key, shape in zip(("min_val", "max_val"), shapes):
            if shape is not None and len(shape) > 1:
                problems.append(f"{prefix}{key}: a per-channel observer's statistics are 1-D (one per channel), "
                                f"the checkpoint holds shape {shape}")

    def __init__(self, ch_axis=0, dtype=quint8, qscheme=per_channel_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=_EPS, is_dynamic=False, **kwargs):
        owner = type(self).__name__
        if is_dynamic:
            raise NotImplementedError(f"{owner}(): dynamic quantization is not supported")
        self.__dict__["ch_axis"] = _int_or_none(ch_axis, owner, "ch_axis")
        if ch_axis is None:
            raise TypeError(f"{owner}(): argument 'ch_axis' must be an int, got None")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.register_buffer("min_val", zeros(0))
        self.register_buffer("max_val", zeros(0))

    def _reduce_dims(self, x):
        owner = type(self).__name__
        if x.ndim == 0:
            raise ValueError(f"{owner}.forward(): a per-channel observer needs at least one dimension, got a 0-d tensor")
        if not -x.ndim <= self.ch_axis < x.ndim:
            raise ValueError(f"{owner}.forward(): ch_axis={self.ch_axis} is out of range for a {x.ndim}-d input")
        ch = self.ch_axis % x.ndim
        return ch, tuple(d for d in range(x.ndim) if d != ch)

    def _update(self, cur_min, cur_max, seen_min, seen_max):
        return np.minimum(cur_min, seen_min), np.maximum(cur_max, seen_max)

    def forward(self, x_orig):
        x = self._check_input(x_orig)
        if x.numel() == 0:
            return x_orig
        ch, dims = self._reduce_dims(x)
        mn, mx, bad = self._extremes(x, dims)
        cur_min, cur_max = _host32(self.min_val), _host32(self.max_val)
        if cur_min.size == 0:
            new_min, new_max = mn, mx
        elif cur_min.shape != mn.shape:
            raise ValueError(f"{type(self).__name__}.forward(): the observer holds {cur_min.size} channel(s) but "
                             f"the input has {mn.size} along ch_axis={self.ch_axis}; call reset_min_max_vals() first")
        else:
            # A channel with no finite value in this batch (only with ignore_nonfinite) keeps its state.
            seen = mn <= mx
            upd_min, upd_max = self._update(cur_min, cur_max, mn, mx)
            new_min = np.where(seen, upd_min, cur_min).astype(_F32)
            new_max = np.where(seen, upd_max, cur_max).astype(_F32)
        self._write("min_val", new_min)
        self._write("max_val", new_max)
        self._count_nonfinite(bad)
        return x_orig

    def calculate_qparams(self):
        mn, mx = _host32(self.min_val), _host32(self.max_val)
        if mn.size == 0:
            raise self._no_data()
        return self._calculate_qparams(mn, mx)

    def extra_repr(self):
        return (f"min_val={self.min_val.tolist()}, max_val={self.max_val.tolist()}, ch_axis={self.ch_axis}, "
                f"{self._config_repr()}")

    def reset_min_max_vals(self):
        """Forgets what was seen (``min_val`` / ``max_val`` become empty)."""
        self._write("min_val", np.zeros(0, dtype=_F32))
        self._write("max_val", np.zeros(0, dtype=_F32))


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel exponential moving averages of each batch's min and max."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=quint8, qscheme=per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=_EPS, is_dynamic=False, **kwargs):
        c = _check_averaging_constant(averaging_constant, type(self).__name__)
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = c

    def _update(self, cur_min, cur_max, seen_min, seen_max):
        return (_moving_average(cur_min, seen_min, self.averaging_constant),
                _moving_average(cur_max, seen_max, self.averaging_constant))


# ----- observers that do not observe ----------------------------------------------------------
class FixedQParamsObserver(ObserverBase):
    """Always reports the given ``scale`` / ``zero_point`` (buffers); forward only passes ``x``
    through. Per tensor only. Used for ops with a known output range (sigmoid, tanh, ...)."""

    def __init__(self, scale, zero_point, dtype=quint8, qscheme=per_tensor_affine, quant_min=0, quant_max=255,
                 is_dynamic=False, **kwargs):
        owner = type(self).__name__
        if is_dynamic:
            raise NotImplementedError(f"{owner}(): dynamic quantization is not supported")
        if kwargs:
            raise TypeError(f"{owner}(): unexpected keyword argument(s) {', '.join(sorted(kwargs))}")
        qd = _observer_qdtype(dtype, owner)
        super().__init__(qd, is_dynamic)
        qs = as_qscheme(qscheme, owner, "qscheme")
        if qs.is_per_channel:
            raise NotImplementedError(f"{owner}(): only per-tensor schemes are supported, got {qs!r}")
        qmin, qmax, _ = _quant_range(qd, quant_min, quant_max, False, owner)
        if not isinstance(scale, numbers.Real) or isinstance(scale, bool) or not (scale > 0 and math.isfinite(scale)):
            raise ValueError(f"{owner}(): argument 'scale' must be a positive finite number, got {scale!r}")
        zp = _int_or_none(zero_point, owner, "zero_point")
        if zp is None or not qmin <= zp <= qmax:
            raise ValueError(f"{owner}(): argument 'zero_point' must be an int in [{qmin}, {qmax}], got {zero_point!r}")
        self.quant_min, self.quant_max, self.qscheme = qmin, qmax, qs
        self.register_buffer("scale", tensor([float(scale)], dtype=_dtype.float32))
        self.register_buffer("zero_point", tensor([zp], dtype=_dtype.int32))

    def forward(self, X):
        return X

    def calculate_qparams(self):
        return self.scale, self.zero_point

    def extra_repr(self):
        return (f"scale={self.scale.item()}, zero_point={self.zero_point.item()}, dtype={self.dtype.name}, "
                f"quant_min={self.quant_min}, quant_max={self.quant_max}")


class PlaceholderObserver(ObserverBase):
    """Observes nothing; carries a configuration (``dtype``, float16 included, ``is_dynamic``,
    ``quant_min`` / ``quant_max``, ``qscheme``) for conversion. ``calculate_qparams`` raises."""

    def __init__(self, dtype=_dtype.float32, custom_op_name="", compute_dtype=None, quant_min=None, quant_max=None,
                 qscheme=None, eps=None, is_dynamic=False, qdtype=None):
        owner = type(self).__name__
        if qdtype is not None:  # upstream lucid's name for dtype
            dtype = qdtype
        super().__init__(_any_dtype(dtype, owner), bool(is_dynamic) or bool(compute_dtype))
        self.qscheme = per_tensor_affine if qscheme is None else as_qscheme(qscheme, owner, "qscheme")
        self.quant_min = _int_or_none(quant_min, owner, "quant_min")
        self.quant_max = _int_or_none(quant_max, owner, "quant_max")
        self.eps = _EPS if eps is None else eps
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def extra_repr(self):
        return f"dtype={self.dtype!r}, is_dynamic={self.is_dynamic}"

    def calculate_qparams(self):
        raise RuntimeError(f"calculate_qparams should not be called for {type(self).__name__}: it collects no "
                           "statistics (it only carries a dtype for conversion)")


class RecordingObserver(ObserverBase):
    """Debugging aid: keeps a copy of every tensor it sees (``get_tensor_value()``);
    ``calculate_qparams`` raises."""

    def __init__(self, dtype=quint8):
        super().__init__(_any_dtype(dtype, type(self).__name__), False)
        self.tensor_val = []

    def forward(self, x):
        self.tensor_val.append(x.detach().clone())
        return x

    def calculate_qparams(self):
        raise RuntimeError("calculate_qparams should not be called for RecordingObserver")

    def get_tensor_value(self):
        return self.tensor_val


class NoopObserver(PlaceholderObserver):
    """Observes nothing (e.g. float16 quantization); ``calculate_qparams`` raises."""

    def __init__(self, dtype=_dtype.float16, custom_op_name="", **kwargs):
        super().__init__(dtype=dtype, custom_op_name=custom_op_name, **kwargs)

    def forward(self, x):
        return x

    def extra_repr(self):
        return f"dtype={self.dtype!r}"



# ----- PyTorch's default factories --------------------------------------------------------------
default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_placeholder_observer = PlaceholderObserver
default_debug_observer = RecordingObserver
default_weight_observer = MinMaxObserver.with_args(dtype="qint8", qscheme="per_tensor_symmetric")
weight_observer_range_neg_127_to_127 = MinMaxObserver.with_args(dtype="qint8", qscheme="per_tensor_symmetric",
                                                                quant_min=-127, quant_max=127, eps=2**-12)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(dtype="qint8",
                                                                         qscheme="per_channel_symmetric")
per_channel_weight_observer_range_neg_127_to_127 = PerChannelMinMaxObserver.with_args(
    dtype="qint8", qscheme="per_channel_symmetric", quant_min=-127, quant_max=127, eps=2**-12)
default_dynamic_quant_observer = PlaceholderObserver.with_args(dtype="quint8", quant_min=0, quant_max=255,
                                                               is_dynamic=True)
default_fixed_qparams_range_neg1to1_observer = FixedQParamsObserver.with_args(
    scale=2.0 / 256.0, zero_point=128, dtype="quint8", quant_min=0, quant_max=255)
default_fixed_qparams_range_0to1_observer = FixedQParamsObserver.with_args(
    scale=1.0 / 256.0, zero_point=0, dtype="quint8", quant_min=0, quant_max=255)
default_symmetric_fixed_qparams_observer = default_fixed_qparams_range_neg1to1_observer
default_affine_fixed_qparams_observer = default_fixed_qparams_range_0to1_observer

# Observers in their own files, built on the classes above.
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
