"""The bases of the observers and their shared helpers: ``ObserverBase`` (a ``Module``
that records statistics and returns its input), ``UniformQuantizationObserverBase``
(argument and input checks, PyTorch's affine / symmetric qparams formulas on the host,
in float32), the ``with_args`` / ``with_callable_args`` factories, and the argument
helpers the observer modules share (docs/numerics.md, "Observers").
"""
from __future__ import annotations

import math
import numbers
from functools import partial

import numpy as np

import lucid._namespace as lucid

from .. import _dtype
from .._creation import tensor, zeros
from .._tensor import Tensor
from ..autograd import no_grad
from ..nn.module import Module
from .qdtype import QDtype, QScheme, as_qdtype, as_qscheme, per_tensor_affine, quint8

__all__ = ["ObserverBase", "UniformQuantizationObserverBase"]

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


def factory_class(factory):
    """The class a factory builds (a class, a ``with_args`` / ``functools.partial`` of one,
    unwrapped), or None when it cannot be told without calling it (a function)."""
    seen = 0
    while seen < 16:
        seen += 1
        if isinstance(factory, type):
            return factory
        if isinstance(factory, _PartialWrapper):
            factory = factory.p
        elif isinstance(factory, partial):
            factory = factory.func
        else:
            return None
    return None


def check_observer_factory(owner: str, argument: str, factory, allow_identity: bool = False) -> None:
    """TypeError naming ``argument`` unless ``factory`` builds an observer or fake-quant
    module: a class or ``with_args`` factory of one (a function is taken on trust; with
    ``allow_identity``, ``nn.Identity`` too, meaning "leave in float")."""
    if isinstance(factory, Module):
        raise ValueError(f"{owner}: argument '{argument}' is an observer instance; pass an observer class or "
                         "factory instead (use MyObserver.with_args(x=1) to set constructor arguments)")
    if not callable(factory):
        raise TypeError(f"{owner}: argument '{argument}' must be an observer class or factory (e.g. "
                        f"MinMaxObserver or MinMaxObserver.with_args(...)), got {type(factory).__name__}")
    cls = factory_class(factory)
    if cls is None or hasattr(cls, "calculate_qparams"):
        return
    if allow_identity and cls.__name__ == "Identity" and issubclass(cls, Module):
        return
    raise TypeError(f"{owner}: argument '{argument}' must build an observer or fake-quant module (a class with "
                    f"calculate_qparams{', or nn.Identity' if allow_identity else ''}), got {cls.__name__}")


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

    @property
    def qdtype(self):
        """Upstream lucid's name for ``dtype``."""
        return self.dtype

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
    _symmetric_reduced_quint8 = False  # PyTorch accepts it for HistogramObserver only

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps=_EPS, is_dynamic=False, ignore_nonfinite=False, **kwargs):
        owner = type(self).__name__
        if "qdtype" in kwargs:  # upstream lucid's name for dtype
            dtype = kwargs.pop("qdtype")
        if kwargs:
            raise TypeError(f"{owner}(): unexpected keyword argument(s) {', '.join(sorted(kwargs))}")
        if isinstance(dtype, QScheme):
            # upstream lucid's positional order (qscheme, qdtype, eps): a scheme and a grid are
            # told apart by type, and a float where reduce_range (a bool) goes is eps
            dtype, qscheme = (qscheme if isinstance(qscheme, QDtype) else quint8), dtype
            if isinstance(reduce_range, numbers.Real) and not isinstance(reduce_range, bool):
                eps, reduce_range = reduce_range, False
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
        if qs.is_symmetric and self.reduce_range and qd.name == "quint8" and not self._symmetric_reduced_quint8:
            raise NotImplementedError(f"{owner}(): cannot reduce range for symmetric quantization for quint8")
        self.ignore_nonfinite = bool(ignore_nonfinite)
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
        mn, mx = (_host32(t) for t in lucid.aminmax(x, dim=dims))
        # amin / amax propagate NaN and keep ±inf, so finite results mean finite inputs.
        if np.isfinite(mn).all() and np.isfinite(mx).all():
            return mn, mx, 0
        finite = lucid.isfinite(x)
        bad = int(lucid.logical_not(finite).sum().item())
        if not self.ignore_nonfinite:
            raise ValueError(f"{type(self).__name__}.forward(): the input holds {bad} non-finite value(s) "
                             "(NaN or ±inf); the observer's state is unchanged (build it with "
                             "ignore_nonfinite=True to skip them)")
        mn = _host32(lucid.amin(lucid.where(finite, x, float("inf")), dim=dims))
        mx = _host32(lucid.amax(lucid.where(finite, x, float("-inf")), dim=dims))
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
            with np.errstate(over="ignore"):
                width = (max_pos - min_neg).astype(_F32)
            scale = (width / _F32(qmax - qmin)).astype(_F32)
            over = ~np.isfinite(width)
            if over.any():  # max - min past the float32 maximum: the halved range's scale, doubled
                half = ((max_pos * _F32(0.5)).astype(_F32) - (min_neg * _F32(0.5)).astype(_F32)).astype(_F32)
                scale = np.where(over, ((half / _F32(qmax - qmin)).astype(_F32) * _F32(2)).astype(_F32), scale)
            scale = np.maximum(scale, eps)
            r = np.rint(min_neg / scale).astype(np.float64)  # float32 quotient, exact widening
            zp = np.clip(np.float64(qmin) - r, qmin, qmax).astype(np.int64)
        return np.asarray(scale, dtype=_F32), zp

    def reset_min_max_vals(self):
        raise NotImplementedError(f"{type(self).__name__}: cannot reset min/max values")

    def _config_repr(self) -> str:
        return (f"dtype={self.dtype.name}, qscheme={self.qscheme.name}, reduce_range={self.reduce_range}, "
                f"quant_min={self.quant_min}, quant_max={self.quant_max}")
