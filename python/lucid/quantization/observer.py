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
from functools import partial

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd import no_grad
from ..nn.module import Module
from .qdtype import QDtype, as_qdtype, as_qscheme, per_channel_affine, per_tensor_affine, quint8

__all__ = ["ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver", "MovingAverageMinMaxObserver",
           "PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver", "HistogramObserver", "FixedQParamsObserver",
           "PlaceholderObserver", "NoopObserver", "RecordingObserver", "PercentileObserver", "MSEObserver",
           "default_observer", "default_placeholder_observer", "default_debug_observer",
           "default_weight_observer", "weight_observer_range_neg_127_to_127", "default_histogram_observer", "default_per_channel_weight_observer",
           "per_channel_weight_observer_range_neg_127_to_127", "default_dynamic_quant_observer",
           "default_fixed_qparams_range_neg1to1_observer", "default_fixed_qparams_range_0to1_observer",
           "default_symmetric_fixed_qparams_observer", "default_affine_fixed_qparams_observer"]

_EPS = float(np.finfo(np.float32).eps)  # 2^-23, PyTorch's torch.finfo(torch.float32).eps
_F32 = np.float32

# PyTorch accepts torch.int8 / torch.uint8 / torch.int32 for qint8 / quint8 / qint32.
_PLAIN_TO_Q = {"int8": "qint8", "uint8": "quint8", "int32": "qint32"}


# ----- factories -----------------------------------------------------------------------------
class _PartialWrapper:
    """A constructor with some arguments bound (``with_args``), some of them computed
    anew for every instance (``with_callable_args``)."""

    def __init__(self, p):
        self.p = p
        self.callable_args = {}

    def __call__(self, *args, **keywords):
        for name, make in self.callable_args.items():
            if name not in keywords:
                keywords = {**keywords, name: make()}
        return self.p(*args, **keywords)

    def __repr__(self):
        return f"{self.p!r}{self.callable_args!r}"

    def with_args(self, **kwargs):
        return _with_args(self, **kwargs)

    def with_callable_args(self, **kwargs):
        result = _PartialWrapper(self.p)
        result.callable_args = {**self.callable_args, **kwargs}
        return result


def _with_args(cls_or_self, **kwargs):
    """A factory building ``cls_or_self(**kwargs)``: ``MinMaxObserver.with_args(dtype=Q.qint8)()``
    gives a new observer each call."""
    return _PartialWrapper(partial(cls_or_self, **kwargs))


def _with_callable_args(cls_or_self, **kwargs):
    """A factory whose arguments ``name=fn`` are computed as ``fn()`` for each instance."""
    return _PartialWrapper(partial(cls_or_self)).with_callable_args(**kwargs)


# ----- argument helpers --------------------------------------------------------------------
def _observer_qdtype(dtype, owner: str) -> QDtype:
    """Our QDtype for ``dtype``: a QDtype, its name, or int8 / uint8 / int32 (PyTorch's plain spellings)."""
    if isinstance(dtype, QDtype):
        return dtype
    if isinstance(dtype, _dtype.dtype) and dtype.name in _PLAIN_TO_Q:
        return as_qdtype(_PLAIN_TO_Q[dtype.name])
    if isinstance(dtype, str) and dtype in _PLAIN_TO_Q:
        return as_qdtype(_PLAIN_TO_Q[dtype])
    return as_qdtype(dtype, owner, "dtype")


def _any_dtype(dtype, owner: str):
    """For observers that only carry a dtype (Placeholder, Noop, Recording): a QDtype, a
    QDtype name, or a lucid float dtype (e.g. float16 for dynamic fp16 quantization)."""
    if isinstance(dtype, (QDtype, _dtype.dtype)):
        return dtype
    if isinstance(dtype, str):
        try:
            return as_qdtype(dtype)
        except TypeError:
            try:
                return _dtype.as_dtype(dtype)
            except (TypeError, ValueError):
                pass
    raise TypeError(f"{owner}(): argument 'dtype' must be a lucid.quantization QDtype or a lucid dtype, "
                    f"got {dtype!r}")


def _int_or_none(value, owner: str, argument: str):
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{owner}(): argument '{argument}' must be an int or None, got {type(value).__name__}")
    return int(value)


def _quant_range(qd: QDtype, quant_min, quant_max, reduce_range: bool, owner: str):
    """``(quant_min, quant_max, customized)`` as PyTorch's observers compute them: a custom
    range must include 0, have quant_min < quant_max and (lucid) fit the dtype's grid; then
    ``reduce_range`` halves it (floor division). Without one, the dtype's grid (halved for
    8-bit grids with ``reduce_range``)."""
    qmin = _int_or_none(quant_min, owner, "quant_min")
    qmax = _int_or_none(quant_max, owner, "quant_max")
    if (qmin is None) != (qmax is None):
        raise ValueError(f"{owner}(): give both 'quant_min' and 'quant_max' or neither, "
                         f"got quant_min={qmin}, quant_max={qmax}")
    if qmin is None:
        lo, hi = qd.reduced_range() if reduce_range else (qd.quant_min, qd.quant_max)
        return lo, hi, False
    if qmin >= qmax:
        raise ValueError(f"{owner}(): 'quant_min' must be < 'quant_max', got quant_min={qmin}, quant_max={qmax}")
    if not qmin <= 0 <= qmax:
        raise ValueError(f"{owner}(): the range [quant_min, quant_max] must include 0, got [{qmin}, {qmax}]")
    if qmin < qd.quant_min or qmax > qd.quant_max:
        raise ValueError(f"{owner}(): [quant_min, quant_max] = [{qmin}, {qmax}] does not fit dtype {qd.name} "
                         f"([{qd.quant_min}, {qd.quant_max}])")
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    return qmin, qmax, True


def _host32(t: Tensor) -> np.ndarray:
    """A (small) tensor's values as a float32 numpy array on the host (exact widening)."""
    return np.array(t.detach().to("cpu").float().numpy(), dtype=_F32, copy=True)


def _to_like(arr, like: Tensor, dtype=None) -> Tensor:
    from .._creation import tensor

    dt = like.dtype if dtype is None else dtype
    return tensor(np.asarray(arr), dtype=dt, device=like.device)


# ----- base classes -----------------------------------------------------------------------
class ObserverBase(Module):
    """Base of every observer: a ``Module`` whose ``forward(x)`` records statistics and
    returns ``x`` unchanged, and whose ``calculate_qparams()`` turns them into
    ``(scale, zero_point)``. ``dtype`` is the grid the qparams are for; ``is_dynamic``
    marks observers whose qparams are computed at run time (dynamic quantization)."""

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)

    def __init__(self, dtype, is_dynamic: bool = False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = bool(is_dynamic)

    def forward(self, x):
        raise NotImplementedError(f"{type(self).__name__} must implement forward()")

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must implement calculate_qparams()")


class UniformQuantizationObserverBase(ObserverBase):
    """Shared machinery of the observers that compute affine / symmetric qparams on a
    uniform grid: argument checks, the ``eps`` buffer, input checks (float input, finite
    values) and PyTorch's qparams formulas.

    ``ignore_nonfinite`` (lucid): NaN / ±inf inputs raise a ValueError (state unchanged)
    unless this is True; then they are skipped and counted in the ``nonfinite_count`` buffer.
    """

    _per_channel = False

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps=_EPS, is_dynamic=False, ignore_nonfinite=False, **kwargs):
        owner = type(self).__name__
        if kwargs:
            raise TypeError(f"{owner}(): unexpected keyword argument(s) {', '.join(sorted(kwargs))}")
        qd = _observer_qdtype(dtype, owner)
        qs = as_qscheme(qscheme, owner, "qscheme")
        super().__init__(qd, is_dynamic)
        if not isinstance(eps, numbers.Real) or isinstance(eps, bool) or not (eps > 0 and math.isfinite(eps)):
            raise ValueError(f"{owner}(): argument 'eps' must be a positive finite number, got {eps!r}")
        if not float(np.finfo(np.float32).tiny) <= float(np.float32(eps)) < math.inf:
            raise ValueError(f"{owner}(): argument 'eps' must be a float32 of at least 2^-126 (the smallest "
                             f"normal float32; smaller scales are rejected), got {eps!r}")
        if qs.is_per_channel != self._per_channel:
            kinds = "per_channel_affine and per_channel_symmetric" if self._per_channel else \
                "per_tensor_affine and per_tensor_symmetric"
            raise NotImplementedError(f"{owner}(): qscheme must be one of {kinds}, got {qs!r}")
        self.qscheme = qs
        self.reduce_range = bool(reduce_range)
        self.quant_min, self.quant_max, self.has_customized_qrange = _quant_range(
            qd, quant_min, quant_max, self.reduce_range, owner)
        if qs.is_symmetric and self.reduce_range and qd.name == "quint8":
            raise NotImplementedError(f"{owner}(): cannot reduce range for symmetric quantization for quint8")
        self.ignore_nonfinite = bool(ignore_nonfinite)
        from .._creation import tensor, zeros

        self.register_buffer("eps", tensor([float(eps)], dtype=_dtype.float32))
        if self.ignore_nonfinite:
            self.register_buffer("nonfinite_count", zeros((), dtype=_dtype.int64))

    # -- input -----------------------------------------------------------------------------
    def _check_input(self, x) -> Tensor:
        owner = type(self).__name__
        if not isinstance(x, Tensor):
            raise TypeError(f"{owner}.forward(): expected a lucid.Tensor, got {type(x).__name__}")
        if not x.dtype.is_floating_point:
            raise TypeError(f"{owner}.forward(): expected a floating-point tensor (float32, float16, bfloat16), "
                            f"got {x.dtype!r}")
        return x.detach()

    def _extremes(self, x: Tensor, dims):
        """Exact ``(min, max)`` of ``x`` over ``dims`` (None: all), on ``x``'s stream, as host
        float32 arrays, and the number of non-finite values skipped. Non-finite inputs raise
        (nothing is written) unless ``ignore_nonfinite``; then a slot with no finite value
        gets (+inf, -inf), which the callers treat as 'nothing seen'."""
        from .. import amax, amin, aminmax, isfinite, logical_not, where

        mn, mx = (_host32(t) for t in aminmax(x, dim=dims))
        # amin / amax propagate NaN and keep ±inf, so finite results mean finite inputs.
        if np.isfinite(mn).all() and np.isfinite(mx).all():
            return mn, mx, 0
        finite = isfinite(x)
        bad = int(logical_not(finite).sum().item())
        if not self.ignore_nonfinite:
            raise ValueError(f"{type(self).__name__}.forward(): the input holds {bad} non-finite value(s) "
                             "(NaN or ±inf); the observer's state is unchanged (build it with "
                             "ignore_nonfinite=True to skip them)")
        mn = _host32(amin(where(finite, x, float("inf")), dim=dims))
        mx = _host32(amax(where(finite, x, float("-inf")), dim=dims))
        return mn, mx, bad

    def _count_nonfinite(self, bad: int) -> None:
        if bad:
            with no_grad():
                self.nonfinite_count.copy_(_to_like(int(self.nonfinite_count.item()) + bad, self.nonfinite_count))

    def _write(self, name: str, values) -> None:
        """Sets buffer ``name`` to ``values`` (host array), in place when the shape is unchanged."""
        buf = self._buffers[name]
        new = _to_like(values, buf)
        if tuple(new.shape) == tuple(buf.shape):
            with no_grad():
                buf.copy_(new)
        else:
            self._buffers[name] = new

    # -- qparams ---------------------------------------------------------------------------
    def _no_data(self):
        return RuntimeError(f"{type(self).__name__}.calculate_qparams(): no data observed yet; "
                            "call the observer on a tensor first")

    def _calculate_qparams(self, min_val, max_val):
        """PyTorch's formulas in float32 on the host (docs/numerics.md, "Observers"):
        returns ``(scale float32, zero_point int32)`` shaped ``[1]`` per tensor, ``[C]`` per channel."""
        owner = type(self).__name__
        mn = np.asarray(min_val, dtype=_F32)
        mx = np.asarray(max_val, dtype=_F32)
        if not (np.isfinite(mn).all() and np.isfinite(mx).all()):
            raise ValueError(f"{owner}.calculate_qparams(): min_val / max_val must be finite, got "
                             f"{mn.tolist()} / {mx.tolist()} (a channel that saw no finite data?)")
        if np.any(mn > mx):
            raise ValueError(f"{owner}.calculate_qparams(): min_val must be <= max_val, got {mn.tolist()} > "
                             f"{mx.tolist()}")
        scale, zp = self._qparams_arrays(mn, mx)
        scale = np.asarray(scale, dtype=_F32).reshape(-1)
        zp = np.asarray(zp, dtype=np.int32).reshape(-1)
        return _to_like(scale, self.eps, _dtype.float32), _to_like(zp, self.eps, _dtype.int32)

    def _qparams_arrays(self, mn, mx):
        """The qparams formulas on float32 arrays of any shape (no checks): (scale, zero_point int64)."""
        qmin, qmax = self.quant_min, self.quant_max
        eps = _host32(self.eps).reshape(-1)[0]
        min_neg = np.minimum(mn, _F32(0))
        max_pos = np.maximum(mx, _F32(0))
        if self.qscheme.is_symmetric:
            amax = np.maximum(-min_neg, max_pos)
            scale = np.maximum(amax / _F32((qmax - qmin) / 2), eps)
            if self.dtype.signed:
                z = 0
            elif self.has_customized_qrange:
                z = (qmin + qmax) // 2
            else:
                z = 128 if self.dtype.name == "quint8" else (qmin + qmax + 1) // 2
            zp = np.full(mn.shape, z, dtype=np.int64)
        else:
            scale = np.maximum((max_pos - min_neg) / _F32(qmax - qmin), eps)
            r = np.rint(min_neg / scale).astype(np.float64)  # float32 quotient, exact widening
            zp = np.clip(np.float64(qmin) - r, qmin, qmax).astype(np.int64)
        return np.asarray(scale, dtype=_F32), zp

    def reset_min_max_vals(self):
        raise NotImplementedError(f"{type(self).__name__}: cannot reset min/max values")

    def _config_repr(self) -> str:
        return (f"dtype={self.dtype.name}, qscheme={self.qscheme.name}, reduce_range={self.reduce_range}, "
                f"quant_min={self.quant_min}, quant_max={self.quant_max}")


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
        from .._creation import tensor

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
        from .._creation import zeros

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
        from .._creation import tensor

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
                 qscheme=None, eps=None, is_dynamic=False):
        owner = type(self).__name__
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
        raise RuntimeError("calculate_qparams should not be called for PlaceholderObserver")


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


class NoopObserver(ObserverBase):
    """Observes nothing (e.g. float16 quantization); ``calculate_qparams`` raises."""

    def __init__(self, dtype=_dtype.float16, custom_op_name=""):
        super().__init__(_any_dtype(dtype, type(self).__name__), False)
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def extra_repr(self):
        return f"dtype={self.dtype!r}"

    def calculate_qparams(self):
        raise RuntimeError("calculate_qparams should not be called for NoopObserver")


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
from .histogram_observer import HistogramObserver  # noqa: E402  (re-exported)
from ._clipping import MSEObserver, PercentileObserver  # noqa: E402,F401  (re-exported)

default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
