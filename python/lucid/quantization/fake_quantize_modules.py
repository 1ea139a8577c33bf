"""Fake quantization modules for quantization-aware training, with PyTorch's
``torch.ao.quantization`` constructors, buffers and defaults.

* ``FakeQuantize``: an observer decides ``scale`` / ``zero_point`` (buffers);
  forward runs the fused ``fake_quantize`` kernel (straight-through gradient).
* ``FixedQParamsFakeQuantize``: fixed qparams for ops with a known output range
  (sigmoid, softmax, hardsigmoid → [0, 1); tanh → [-1, 1)).
* ``LearnableFakeQuantize`` (PyTorch's ``_LearnableFakeQuantize``, LSQ / LSQ+):
  ``scale`` and ``zero_point`` are Parameters trained through the fused
  ``fake_quantize_learnable`` kernel.

Flags (``fake_quant_enabled``, ``observer_enabled``, ...) are uint8 buffers,
so they travel in the ``state_dict`` as in PyTorch, and ``model.apply(
lucid.quantization.disable_observer)`` switches every fake-quant of a model.

>>> import lucid
>>> import lucid.quantization as Q
>>> fq = Q.FakeQuantize(quant_min=0, quant_max=255)
>>> y = fq(lucid.tensor([-1.0, 0.0, 0.5, 3.0]))
>>> round(fq.scale.item(), 6), fq.zero_point.item()
(0.015686, 64)
>>> [round(v, 4) for v in y.tolist()]
[-1.0039, 0.0, 0.502, 2.9961]
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtype
from .._creation import tensor
from .._tensor import Tensor
from ..autograd import no_grad
from ..nn.module import Module
from ..nn.parameter import Parameter
from .observer import (FixedQParamsObserver, HistogramObserver, MovingAverageMinMaxObserver,
                       MovingAveragePerChannelMinMaxObserver, default_fixed_qparams_range_0to1_observer,
                       default_fixed_qparams_range_neg1to1_observer)
from .observer_base import _host32, _observer_qdtype, _with_args, _with_callable_args, check_observer_factory
from .primitives import fake_quantize, fake_quantize_learnable
from .qdtype import QDtype, per_channel_symmetric, per_tensor_affine, per_tensor_symmetric, qint8, quint8

__all__ = ["FakeQuantizeBase", "FakeQuantize", "FixedQParamsFakeQuantize", "FusedMovingAvgObsFakeQuantize",
           "LearnableFakeQuantize", "enable_fake_quant", "disable_fake_quant", "enable_observer",
           "disable_observer", "default_fake_quant", "default_weight_fake_quant", "default_dynamic_fake_quant",
           "default_per_channel_weight_fake_quant", "default_histogram_fake_quant",
           "default_fixed_qparams_range_0to1_fake_quant", "default_fixed_qparams_range_neg1to1_fake_quant",
           "default_symmetric_fixed_qparams_fake_quant", "default_affine_fixed_qparams_fake_quant",
           "default_fused_act_fake_quant", "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant",
           "fused_wt_fake_quant_range_neg_127_to_127", "fused_per_channel_wt_fake_quant_range_neg_127_to_127"]


def _flag(value: int, like: Tensor | None = None) -> Tensor:
    return tensor([value], dtype=_dtype.uint8, device=None if like is None else like.device)


def _is_on(buf: Tensor) -> bool:
    return int(buf.reshape(-1)[0].item()) == 1


def _set_flag(module: Module, name: str, enabled) -> None:
    buf = module._buffers[name]
    with no_grad():
        buf.copy_(_flag(1 if enabled else 0, buf))


def _bound_dtype(observer, observer_kwargs):
    """The grid the observer will use: its ``dtype`` keyword (in the call or bound by
    ``with_args``), else quint8 as PyTorch assumes."""
    dtype = observer_kwargs.get("dtype")
    partial_ = getattr(observer, "p", None)
    if dtype is None and partial_ is not None:
        dtype = getattr(partial_, "keywords", {}).get("dtype")
    return quint8 if dtype is None else _observer_qdtype(dtype, "FakeQuantize")


def _check_range(owner: str, quant_min, quant_max, qd: QDtype):
    for name, v in (("quant_min", quant_min), ("quant_max", quant_max)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{owner}(): argument '{name}' must be an int, got {type(v).__name__}")
    if quant_min > quant_max:
        raise ValueError(f"{owner}(): quant_min ({quant_min}) must be <= quant_max ({quant_max})")
    if quant_min < qd.quant_min or quant_max > qd.quant_max:
        raise ValueError(f"{owner}(): [quant_min, quant_max] = [{quant_min}, {quant_max}] does not fit the "
                         f"{qd.name} grid [{qd.quant_min}, {qd.quant_max}]")


class FakeQuantizeBase(Module):
    """Base of the fake-quant modules: the ``fake_quant_enabled`` / ``observer_enabled``
    uint8 buffers and their switches, and ``with_args`` factories."""

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", _flag(1))
        self.register_buffer("observer_enabled", _flag(1))

    def forward(self, x):
        raise NotImplementedError(f"{type(self).__name__} must implement forward()")

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must implement calculate_qparams()")

    @property
    def qdtype(self):
        """Upstream lucid's name for ``dtype``."""
        return self.dtype

    # They return self, as upstream lucid's do (PyTorch's return None), so calls chain.
    def enable_fake_quant(self, enabled: bool = True):
        _set_flag(self, "fake_quant_enabled", enabled)
        return self

    def disable_fake_quant(self):
        return self.enable_fake_quant(False)

    def enable_observer(self, enabled: bool = True):
        _set_flag(self, "observer_enabled", enabled)
        return self

    def disable_observer(self):
        return self.enable_observer(False)


class FakeQuantize(FakeQuantizeBase):
    """Observe, then fake-quantize: ``y = (clamp(rint(x / scale) + zero_point, quant_min,
    quant_max) - zero_point) * scale``, the gradient passing straight through inside the grid.

    ``FakeQuantize(observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None,
    is_dynamic=False, **observer_kwargs)``: the observer is built as
    ``observer(quant_min=..., quant_max=..., is_dynamic=..., **observer_kwargs)``. While
    ``observer_enabled``, each forward feeds the observer and copies its qparams into the
    ``scale`` (float32) / ``zero_point`` (int32) buffers, which take a per-channel
    observer's shape (also when loaded from a state dict). While ``fake_quant_enabled``,
    the output is fake-quantized (per channel along the observer's ``ch_axis`` for
    per-channel schemes), else it is ``x``.

    ValueError for ``quant_min > quant_max`` or a range outside the observer's dtype.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> fq = Q.default_per_channel_weight_fake_quant()
    >>> _ = fq(lucid.tensor([[1.0, -2.0], [0.5, 0.25]]))
    >>> [round(s, 6) for s in fq.scale.tolist()], fq.zero_point.tolist()
    ([0.015686, 0.003922], [0, 0])
    """

    _resizable_buffers = frozenset({"scale", "zero_point"})

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None, is_dynamic=False,
                 **observer_kwargs):
        super().__init__()
        owner = type(self).__name__
        if "qdtype" in observer_kwargs:  # upstream lucid's name for dtype
            observer_kwargs["dtype"] = observer_kwargs.pop("qdtype")
        if quant_min is not None and quant_max is not None:
            _check_range(owner, quant_min, quant_max, _bound_dtype(observer, observer_kwargs))
            observer_kwargs.update(quant_min=quant_min, quant_max=quant_max)
        elif (quant_min is None) != (quant_max is None):
            raise ValueError(f"{owner}(): give both 'quant_min' and 'quant_max' or neither")
        observer_kwargs["is_dynamic"] = is_dynamic
        check_observer_factory(f"{owner}()", "observer", observer)
        self.activation_post_process = observer(**observer_kwargs)
        app = self.activation_post_process
        if not hasattr(app, "calculate_qparams") or not hasattr(app, "qscheme"):
            raise TypeError(f"{owner}(): 'observer' must build a lucid.quantization observer, got "
                            f"{type(app).__name__}")
        self.quant_min = app.quant_min
        self.quant_max = app.quant_max
        self.is_dynamic = app.is_dynamic
        self.dtype = app.dtype
        self.qscheme = app.qscheme
        self.ch_axis = app.ch_axis if hasattr(app, "ch_axis") else -1
        self.is_per_channel = self.qscheme.is_per_channel
        self.register_buffer("scale", tensor([1.0], dtype=_dtype.float32))
        self.register_buffer("zero_point", tensor([0], dtype=_dtype.int32))

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def _store_qparams(self, scale: Tensor, zero_point: Tensor) -> None:
        for name, value in (("scale", scale), ("zero_point", zero_point)):
            buf = self._buffers[name]
            value = value.to(device=buf.device, dtype=buf.dtype)
            if tuple(value.shape) == tuple(buf.shape):
                with no_grad():
                    buf.copy_(value)
            else:  # per-channel: the buffer takes the observer's channel count
                self._buffers[name] = value.detach().clone()

    def forward(self, X):
        if _is_on(self.observer_enabled):
            self.activation_post_process(X.detach())
            self._store_qparams(*self.calculate_qparams())
        if _is_on(self.fake_quant_enabled):
            ch = self.ch_axis if self.is_per_channel else None
            fg = self.dtype if getattr(self.dtype, "is_floating", False) else None  # float grids: FP8 / FP4
            X = fake_quantize(X, self.scale, self.zero_point, self.quant_min, self.quant_max, ch, qdtype=fg)
        return X

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled.tolist()}, "
                f"observer_enabled={self.observer_enabled.tolist()}, quant_min={self.quant_min}, "
                f"quant_max={self.quant_max}, dtype={self.dtype!r}, qscheme={self.qscheme!r}, ch_axis={self.ch_axis}, "
                f"scale={self.scale.tolist()}, zero_point={self.zero_point.tolist()}")


# fbgemm's cut-off for tiny scales (the float16 normal minimum), used by PyTorch's fused kernel.
_SMALL_SCALE = np.float32(6.1e-5)


def _choose_qparams_fbgemm(mn: np.float32, mx: np.float32, qmin: int, qmax: int, symmetric: bool):
    """fbgemm's ``ChooseQuantizationParams`` (what PyTorch's fused observe+fake-quant kernel
    uses), step for step: float32 where it keeps floats, float64 where it widens."""
    f32, f64 = np.float32, np.float64
    mn, mx = f32(mn), f32(mx)
    if mn < 0 and mx > 0 and symmetric:
        sym_qmin, sym_qmax = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
        max_scale = f64(max(abs(f32(mn / f32(sym_qmin))), abs(f32(mx / f32(sym_qmax)))))
        mn, mx = f32(max_scale * sym_qmin), f32(max_scale * sym_qmax)
    mn, mx = min(mn, f32(0)), max(mx, f32(0))
    scale = (f64(mx) - f64(mn)) / f64(qmax - qmin)
    if f32(scale) == 0 or not np.isfinite(f32(1) / f32(scale)):
        scale = f64(0.1)
    if scale < _SMALL_SCALE:
        org = f32(scale)
        scale = f64(_SMALL_SCALE)
        if mn == 0:
            mx = f32(_SMALL_SCALE * f32(qmax - qmin))
        elif mx == 0:
            mn = f32(-_SMALL_SCALE * f32(qmax - qmin))
        else:
            amp = f32(_SMALL_SCALE / org)
            mn, mx = f32(mn * amp), f32(mx * amp)
    zp_min = f64(qmin) - f64(mn) / scale
    zp_max = f64(qmax) - f64(mx) / scale
    err_min = f64(abs(qmin)) - abs(f64(mn) / scale)
    err_max = f64(abs(qmax)) - abs(f64(mx) / scale)
    zp = zp_min if err_min < err_max else zp_max
    if mn < 0 and mx > 0 and symmetric:
        zp = f64(qmin + qmax) / 2
    zp = qmin if zp < qmin else (qmax if zp > qmax else int(np.rint(zp)))
    return f32(scale), zp


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """PyTorch's fused observe-and-fake-quantize module (the default of
    ``get_default_qat_qconfig``). The observer keeps the moving-average min / max as
    ``FakeQuantize``'s does; the qparams then follow fbgemm's ``ChooseQuantizationParams``
    as PyTorch's fused kernel does (float64 intermediates; symmetric grids use
    ``max(|min| / 128, |max| / 127)``, so they differ from the observer's own
    ``calculate_qparams``). Per-channel: along ``ch_axis`` 0 only (PyTorch's limit).
    TypeError unless the observer is a (per-channel) moving-average min/max observer.
    """

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        app = self.activation_post_process
        if not isinstance(app, (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver)):
            raise TypeError(f"FusedMovingAvgObsFakeQuantize(): the observer must be a MovingAverageMinMaxObserver or "
                            f"MovingAveragePerChannelMinMaxObserver, got {type(app).__name__}")
        if self.is_per_channel and self.ch_axis != 0:
            raise ValueError(f"FusedMovingAvgObsFakeQuantize(): per-channel fake quantization needs ch_axis=0, got "
                             f"{self.ch_axis}")
        self.is_symmetric_quant = self.qscheme.is_symmetric

    def calculate_qparams(self):
        app = self.activation_post_process
        mn = np.asarray(_host32(app.min_val)).reshape(-1)
        mx = np.asarray(_host32(app.max_val)).reshape(-1)
        if mn.size == 0 or not (np.isfinite(mn).all() and np.isfinite(mx).all()):
            raise RuntimeError("FusedMovingAvgObsFakeQuantize.calculate_qparams(): no data observed yet")
        pairs = [_choose_qparams_fbgemm(a, b, self.quant_min, self.quant_max, self.is_symmetric_quant)
                 for a, b in zip(mn, mx)]
        dev = self.scale.device
        return (tensor(np.array([p[0] for p in pairs], np.float32), device=dev),
                tensor(np.array([p[1] for p in pairs], np.int32), device=dev))


class FixedQParamsFakeQuantize(FakeQuantize):
    """Fake quantization with fixed per-tensor qparams, from a ``FixedQParamsObserver``
    factory (``scale`` / ``zero_point`` are that observer's buffers). TypeError for any
    other observer.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> fq = Q.default_fixed_qparams_range_0to1_fake_quant()
    >>> fq.scale.item(), fq.zero_point.item(), fq(lucid.tensor([0.5, 1.2])).tolist()
    (0.00390625, 0, [0.5, 0.99609375])
    """

    _resizable_buffers = frozenset()

    def __init__(self, observer):
        super().__init__(observer=observer)
        app = self.activation_post_process
        if type(app) is not FixedQParamsObserver:
            raise TypeError(f"FixedQParamsFakeQuantize(): the observer must be a FixedQParamsObserver, got "
                            f"{type(app).__name__}")
        self._observer_ctr = observer
        self.scale = app.scale
        self.zero_point = app.zero_point

    def calculate_qparams(self):
        return self.scale, self.zero_point

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled.tolist()}, "
                f"observer_enabled={self.observer_enabled.tolist()}, scale={self.scale.tolist()}, "
                f"zero_point={self.zero_point.tolist()}, dtype={self.dtype!r}, quant_min={self.quant_min}, "
                f"quant_max={self.quant_max}, qscheme={self.qscheme!r}")


class LearnableFakeQuantize(FakeQuantizeBase):
    """LSQ / LSQ+ fake quantization (PyTorch's ``_LearnableFakeQuantize``): ``scale`` and
    ``zero_point`` are ``Parameter``s (float; length ``channel_len`` per channel, else 1)
    trained by backpropagation through ``fake_quantize_learnable`` (PyTorch's gradients).

    Buffers: ``fake_quant_enabled`` (1), ``static_enabled`` (1: the observer sets the
    qparams each forward), ``learning_enabled`` (0), ``eps``. ``enable_param_learning()``
    learns instead of observing; ``enable_static_estimate()`` observes;
    ``enable_static_observation()`` observes without fake quantization.
    ``use_grad_scaling`` multiplies the qparam gradients by ``1 / sqrt(numel * quant_max)``.
    ValueError for ``quant_min >= quant_max`` or a range outside the observer's dtype.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> fq = Q.LearnableFakeQuantize(Q.MovingAverageMinMaxObserver, quant_min=0, quant_max=15)
    >>> _ = fq.enable_param_learning()
    >>> x = lucid.tensor([0.26, 2.0], requires_grad=True)
    >>> with lucid.no_grad():
    ...     _ = fq.scale.copy_(lucid.tensor([0.1]))
    >>> fq(x).sum().backward()
    >>> [round(v, 4) for v in fq.scale.grad.tolist()]
    [15.4]
    """

    def __init__(self, observer, quant_min=0, quant_max=255, scale=1.0, zero_point=0.0, channel_len=-1,
                 use_grad_scaling=False, **observer_kwargs):
        super().__init__()
        owner = type(self).__name__
        for name, v in (("quant_min", quant_min), ("quant_max", quant_max)):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
                raise TypeError(f"{owner}(): argument '{name}' must be an int, got {type(v).__name__}")
        if quant_min >= quant_max:
            raise ValueError(f"{owner}(): quant_min ({quant_min}) must be < quant_max ({quant_max})")
        self.quant_min, self.quant_max = int(quant_min), int(quant_max)
        observer_kwargs.update(quant_min=quant_min, quant_max=quant_max)
        self.use_grad_scaling = bool(use_grad_scaling)
        if channel_len == -1:
            n = 1
        elif isinstance(channel_len, numbers.Integral) and not isinstance(channel_len, bool) and channel_len > 0:
            n = int(channel_len)
        else:
            raise ValueError(f"{owner}(): argument 'channel_len' must be a positive int or -1, got {channel_len!r}")
        for name, v in (("scale", scale), ("zero_point", zero_point)):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                raise TypeError(f"{owner}(): argument '{name}' must be a float, got {type(v).__name__}")
            if not math.isfinite(float(v)):
                raise ValueError(f"{owner}(): argument '{name}' must be finite, got {v!r}")
        if not float(scale) > 0:
            raise ValueError(f"{owner}(): argument 'scale' must be > 0, got {scale!r}")
        check_observer_factory(f"{owner}()", "observer", observer)
        self.scale = Parameter(tensor([float(scale)] * n, dtype=_dtype.float32))
        self.zero_point = Parameter(tensor([float(zero_point)] * n, dtype=_dtype.float32))
        self.activation_post_process = observer(**observer_kwargs)
        app = self.activation_post_process
        qd = app.dtype
        if quant_min < qd.quant_min or quant_max > qd.quant_max:
            raise ValueError(f"{owner}(): [quant_min, quant_max] = [{quant_min}, {quant_max}] does not fit the "
                             f"{qd.name} grid [{qd.quant_min}, {qd.quant_max}]")
        self.dtype = qd
        self.qscheme = app.qscheme
        self.ch_axis = app.ch_axis if hasattr(app, "ch_axis") else -1
        self.register_buffer("static_enabled", _flag(1))
        self.register_buffer("learning_enabled", _flag(0))
        self.bitwidth = int(math.log2(quant_max - quant_min + 1))
        self.register_buffer("eps", tensor([float(np.finfo(np.float32).eps)], dtype=_dtype.float32))

    # -- switches (PyTorch's names) ----------------------------------------------------------
    def enable_param_learning(self):
        """Learn the qparams by backpropagation; fake-quantize; stop observing."""
        self.toggle_qparam_learning(enabled=True).toggle_fake_quant(enabled=True).toggle_observer_update(enabled=False)
        return self

    def enable_static_estimate(self):
        """Set the qparams from the observer; fake-quantize; no learning."""
        self.toggle_qparam_learning(enabled=False).toggle_fake_quant(enabled=True).toggle_observer_update(enabled=True)

    def enable_static_observation(self):
        """Observe only: qparams from the observer, output = input."""
        self.toggle_qparam_learning(enabled=False).toggle_fake_quant(enabled=False).toggle_observer_update(enabled=True)

    def toggle_observer_update(self, enabled=True):
        _set_flag(self, "static_enabled", enabled)
        return self

    def enable_observer(self, enabled=True):
        return self.toggle_observer_update(enabled)

    def toggle_qparam_learning(self, enabled=True):
        _set_flag(self, "learning_enabled", enabled)
        self.scale.requires_grad = bool(enabled)
        self.zero_point.requires_grad = bool(enabled)
        return self

    def toggle_fake_quant(self, enabled=True):
        _set_flag(self, "fake_quant_enabled", enabled)
        return self

    def enable_fake_quant(self, enabled: bool = True):
        return self.toggle_fake_quant(enabled)

    def _clamp_scale(self):
        with no_grad():
            self.scale.copy_(self.scale.clamp(min=float(self.eps.item())))

    def calculate_qparams(self):
        """``(scale, zero_point)``: the scale clamped to ``eps`` (in place, as PyTorch), the zero
        point rounded half to even and clamped, as int64."""
        self._clamp_scale()
        zp = np.clip(np.rint(self.zero_point.detach().to("cpu").numpy()), self.quant_min, self.quant_max)
        return self.scale.detach(), tensor(zp.astype(np.int64), device=self.zero_point.device)

    def forward(self, X):
        if _is_on(self.static_enabled):
            self.activation_post_process(X.detach())
            s, z = self.activation_post_process.calculate_qparams()
            with no_grad():
                self.scale.copy_(s.to(device=self.scale.device, dtype=self.scale.dtype))
                self.zero_point.copy_(z.to(device=self.zero_point.device, dtype=self.zero_point.dtype))
        else:
            self._clamp_scale()
        if _is_on(self.fake_quant_enabled):
            if self.qscheme in (per_channel_symmetric, per_tensor_symmetric):
                with no_grad():
                    self.zero_point.copy_(self.zero_point * 0.0)
            grad_factor = 1.0 / (X.numel() * self.quant_max) ** 0.5 if self.use_grad_scaling else 1.0
            ch = self.ch_axis if self.qscheme.is_per_channel else None
            X = fake_quantize_learnable(X, self.scale, self.zero_point, self.quant_min, self.quant_max, ch,
                                        grad_factor)
        return X


_LearnableFakeQuantize = LearnableFakeQuantize


# ----- module-level switches for model.apply -------------------------------------------------
def disable_fake_quant(mod):
    """``model.apply(Q.disable_fake_quant)``: turns fake quantization off in every fake-quant module."""
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_fake_quant()


def enable_fake_quant(mod):
    """``model.apply(Q.enable_fake_quant)``."""
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_fake_quant()


def disable_observer(mod):
    """``model.apply(Q.disable_observer)``: freezes the qparams of every fake-quant module."""
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_observer()


def enable_observer(mod):
    """``model.apply(Q.enable_observer)``."""
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_observer()


# ----- PyTorch's default factories --------------------------------------------------------------
default_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                            dtype=quint8, qscheme=per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128,
                                                   quant_max=127, dtype=qint8, qscheme=per_tensor_symmetric,
                                                   reduce_range=False)
default_dynamic_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                                    is_dynamic=True, dtype=quint8, averaging_constant=1)
default_fixed_qparams_range_neg1to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_neg1to1_observer)
default_fixed_qparams_range_0to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_0to1_observer)
default_symmetric_fixed_qparams_fake_quant = default_fixed_qparams_range_neg1to1_fake_quant
default_affine_fixed_qparams_fake_quant = default_fixed_qparams_range_0to1_fake_quant
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_channel_symmetric, reduce_range=False, ch_axis=0)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8, qscheme=per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_channel_symmetric)
fused_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-127, quant_max=127, dtype=qint8,
    qscheme=per_tensor_symmetric, eps=2**-12)
fused_per_channel_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-127, quant_max=127, dtype=qint8,
    qscheme=per_channel_symmetric, eps=2**-12)


default_histogram_fake_quant = FakeQuantize.with_args(observer=HistogramObserver, quant_min=0, quant_max=255,
                                                      dtype=quint8, qscheme=per_tensor_affine, reduce_range=True)
