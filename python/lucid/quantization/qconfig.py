"""``QConfig``: which observer (or fake-quant) factory watches a layer's activations
and which its weights, with PyTorch's defaults (``torch.ao.quantization.qconfig``,
PyTorch 2.x) so a ported script picks the same observers and arguments.

A QConfig holds factories (classes or ``with_args`` partials), never observer
instances: ``prepare`` builds a fresh observer per layer. A config is *dynamic*
(PyTorch's old ``QConfigDynamic``) when its activation observer has
``is_dynamic=True``: activations are quantized at run time.

lucid adds ``weight_int4_qconfig(group_size)``: int4 weights in groups of 32, 64
or 128 along the input features (``PerGroupMinMaxObserver``, qint4, symmetric),
activations left in float — for weight-only quantized models (LLM-style linears).

>>> import lucid.quantization as Q
>>> qc = Q.get_default_qconfig("qnnpack")
>>> obs = qc.weight()
>>> type(obs).__name__, obs.dtype.name, obs.qscheme.name
('MinMaxObserver', 'qint8', 'per_tensor_symmetric')
>>> Q.default_dynamic_qconfig.is_dynamic, Q.default_qconfig.is_dynamic
(True, False)
"""
from __future__ import annotations

from collections import namedtuple

from .. import _dtype
from ..nn.layers import Identity
from ..nn.module import Module
from . import observer as _obs
from .fake_quantize_modules import (FakeQuantize, FusedMovingAvgObsFakeQuantize, default_dynamic_fake_quant,
                                    default_fake_quant, default_fused_act_fake_quant,
                                    default_fused_per_channel_wt_fake_quant, default_fused_wt_fake_quant,
                                    default_per_channel_weight_fake_quant, default_weight_fake_quant,
                                    fused_per_channel_wt_fake_quant_range_neg_127_to_127,
                                    fused_wt_fake_quant_range_neg_127_to_127)
from .group_observer import PerGroupMinMaxObserver
from .observer_base import check_observer_factory
from .observer import (HistogramObserver, MovingAverageMinMaxObserver, PlaceholderObserver,
                       default_dynamic_quant_observer,
                       default_observer, default_per_channel_weight_observer, default_weight_observer,
                       per_channel_weight_observer_range_neg_127_to_127, weight_observer_range_neg_127_to_127)
from .qdtype import per_channel_symmetric, qint4, qint8

__all__ = ["QConfig", "QConfigDynamic", "QConfigAny", "default_qconfig", "default_debug_qconfig", "default_per_channel_qconfig",
           "default_dynamic_qconfig", "float16_dynamic_qconfig", "float16_static_qconfig",
           "per_channel_dynamic_qconfig", "default_qat_qconfig", "default_dynamic_qat_qconfig",
           "default_weight_only_qconfig", "default_activation_only_qconfig", "default_qat_qconfig_v2",
           "default_symmetric_qnnpack_qconfig", "default_per_channel_symmetric_qnnpack_qconfig",
           "default_symmetric_qnnpack_qat_qconfig", "default_per_channel_symmetric_qnnpack_qat_qconfig",
           "default_quint8_weight_qconfig", "get_default_qconfig", "get_default_qat_qconfig", "weight_int4_qconfig",
           "BACKENDS", "INT4_GROUP_SIZES"]

# PyTorch's backends, plus "arm" (lucid's name for the qnnpack / XNNPACK settings on arm64).
BACKENDS = ("x86", "fbgemm", "qnnpack", "arm", "onednn")
INT4_GROUP_SIZES = (32, 64, 128)


def _factory_is_dynamic(factory) -> bool:
    """Whether a factory builds a dynamic observer, read from its bound arguments when it
    has them (no instance needed), else from an instance."""
    if factory is None:
        return False
    keywords = getattr(factory, "keywords", None)
    if keywords is None:
        keywords = getattr(getattr(factory, "p", None), "keywords", None)
    if keywords is not None and "is_dynamic" in keywords:
        return bool(keywords["is_dynamic"])
    return bool(getattr(factory(), "is_dynamic", False))


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """``QConfig(activation, weight)``: two observer / fake-quant factories (classes or
    ``with_args`` partials; ``nn.Identity`` or None for "leave in float").

    ValueError when given observer *instances* (they would be shared by every layer);
    TypeError, naming the argument, for anything that does not build an observer or
    fake-quant (a number, a plain layer such as ``nn.ReLU``).

    >>> import lucid.quantization as Q
    >>> qc = Q.QConfig(activation=Q.MinMaxObserver.with_args(dtype=Q.qint8), weight=Q.default_weight_observer)
    >>> qc.activation().dtype.name
    'qint8'
    """

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, Module) or isinstance(weight, Module):
            raise ValueError("QConfig received an observer instance; pass an observer class or factory instead "
                             "(use MyObserver.with_args(x=1) to set constructor arguments)")
        for argument, factory in (("activation", activation), ("weight", weight)):
            if factory is not None:
                check_observer_factory("QConfig()", argument, factory, allow_identity=True)
        return super().__new__(cls, activation, weight)

    @property
    def is_dynamic(self) -> bool:
        """True when the activation observer is dynamic (qparams computed at run time)."""
        return _factory_is_dynamic(self.activation)


def QConfigDynamic(activation=Identity, weight=Identity):
    """PyTorch's deprecated ``QConfigDynamic``: a ``QConfig`` (dynamic configs are told
    apart by ``is_dynamic`` on the activation observer)."""
    return QConfig(activation, weight)


QConfigAny = object  # type annotation alias: a QConfig or None


# ----- PyTorch's defaults ------------------------------------------------------------------------
default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_debug_qconfig = QConfig(activation=_obs.default_debug_observer, weight=default_weight_observer)
default_per_channel_qconfig = QConfig(activation=default_observer, weight=default_per_channel_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer, weight=default_weight_observer)
float16_dynamic_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=_dtype.float16, is_dynamic=True),
                                  weight=PlaceholderObserver.with_args(dtype=_dtype.float16))
float16_static_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=_dtype.float16),
                                 weight=PlaceholderObserver.with_args(dtype=_dtype.float16))
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)
default_dynamic_qat_qconfig = QConfig(activation=default_dynamic_fake_quant, weight=default_weight_fake_quant)
default_weight_only_qconfig = QConfig(activation=Identity, weight=default_weight_fake_quant)
default_activation_only_qconfig = QConfig(activation=default_fake_quant, weight=Identity)
default_qat_qconfig_v2 = QConfig(activation=default_fused_act_fake_quant, weight=default_fused_wt_fake_quant)
default_symmetric_qnnpack_qconfig = QConfig(
    activation=HistogramObserver.with_args(dtype=qint8, reduce_range=False, eps=2**-12),
    weight=weight_observer_range_neg_127_to_127)
default_per_channel_symmetric_qnnpack_qconfig = QConfig(
    activation=HistogramObserver.with_args(dtype=qint8, reduce_range=False, eps=2**-12),
    weight=per_channel_weight_observer_range_neg_127_to_127)
default_symmetric_qnnpack_qat_qconfig = QConfig(
    activation=FusedMovingAvgObsFakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128,
                                                       quant_max=127, dtype=qint8, reduce_range=False, eps=2**-12),
    weight=fused_wt_fake_quant_range_neg_127_to_127)
default_per_channel_symmetric_qnnpack_qat_qconfig = QConfig(
    activation=FusedMovingAvgObsFakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128,
                                                       quant_max=127, dtype=qint8, reduce_range=False, eps=2**-12),
    weight=fused_per_channel_wt_fake_quant_range_neg_127_to_127)
default_quint8_weight_qconfig = QConfig(activation=HistogramObserver, weight=_obs.MinMaxObserver)


def _check_backend(fn: str, backend) -> str:
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"{fn}(): unknown backend {backend!r}; expected one of {', '.join(map(repr, BACKENDS))}")
    return "qnnpack" if backend == "arm" else backend


def get_default_qconfig(backend="x86", version=0) -> QConfig:
    """PyTorch's default post-training QConfig for ``backend``:

    * ``"x86"``, ``"fbgemm"``: HistogramObserver(reduce_range=True) activations (quint8, 0..127
      effective), per-channel symmetric qint8 weights;
    * ``"qnnpack"`` / ``"arm"``: HistogramObserver(reduce_range=False), per-tensor symmetric
      qint8 weights;
    * ``"onednn"``: HistogramObserver(reduce_range=False), per-channel weights.

    ValueError for another backend (the message lists the valid ones) or ``version != 0``.

    >>> import lucid.quantization as Q
    >>> Q.get_default_qconfig("x86").weight is Q.default_per_channel_weight_observer
    True
    """
    b = _check_backend("get_default_qconfig", backend)
    if version != 0:
        raise ValueError(f"get_default_qconfig(): version must be 0, got {version!r}")
    if b in ("x86", "fbgemm"):
        return QConfig(activation=HistogramObserver.with_args(reduce_range=True),
                       weight=default_per_channel_weight_observer)
    if b == "qnnpack":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False), weight=default_weight_observer)
    return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                   weight=default_per_channel_weight_observer)


def get_default_qat_qconfig(backend="x86", version=1) -> QConfig:
    """PyTorch's default QAT QConfig for ``backend``. ``version=1`` (the default) uses the
    fused moving-average fake-quant (``FusedMovingAvgObsFakeQuantize``), ``version=0`` plain
    ``FakeQuantize``; activations quint8 0..255 with ``reduce_range`` on x86 / fbgemm and off
    on qnnpack / arm (onednn: the observer's default, off); weights per-channel symmetric
    (x86, fbgemm, onednn) or per-tensor symmetric (qnnpack / arm).

    ValueError for another backend or a version other than 0 and 1.

    >>> import lucid.quantization as Q
    >>> fq = Q.get_default_qat_qconfig("fbgemm").activation()
    >>> type(fq).__name__, fq.quant_min, fq.quant_max
    ('FusedMovingAvgObsFakeQuantize', 0, 127)
    """
    b = _check_backend("get_default_qat_qconfig", backend)
    if version not in (0, 1):
        raise ValueError(f"get_default_qat_qconfig(): version must be 0 or 1, got {version!r}")
    fq = FakeQuantize if version == 0 else FusedMovingAvgObsFakeQuantize
    per_channel_w = default_per_channel_weight_fake_quant if version == 0 else default_fused_per_channel_wt_fake_quant
    per_tensor_w = default_weight_fake_quant if version == 0 else default_fused_wt_fake_quant
    if b in ("x86", "fbgemm"):
        act = fq.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, reduce_range=True)
        return QConfig(activation=act, weight=per_channel_w)
    if b == "qnnpack":
        act = fq.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, reduce_range=False)
        return QConfig(activation=act, weight=per_tensor_w)
    act = fq.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
    return QConfig(activation=act, weight=per_channel_w)


def weight_int4_qconfig(group_size=128) -> QConfig:
    """lucid's weight-only int4 config: weights as qint4 (-8..7), symmetric, one scale per
    ``group_size`` consecutive input features (32, 64 or 128; the per-group layout of
    ``quantize(..., group_size=g, axis=-1)``, packable with ``pack_int4``); activations stay
    float (``PlaceholderObserver`` float32, not dynamic). ValueError for another group size.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> obs = Q.weight_int4_qconfig(32).weight()
    >>> _ = obs(lucid.ones(4, 64))
    >>> obs.calculate_qparams()[0].shape
    (4, 2)
    """
    if isinstance(group_size, bool) or group_size not in INT4_GROUP_SIZES:
        raise ValueError(f"weight_int4_qconfig(): group_size must be one of {INT4_GROUP_SIZES}, got {group_size!r}")
    return QConfig(activation=PlaceholderObserver.with_args(dtype=_dtype.float32),
                   weight=PerGroupMinMaxObserver.with_args(group_size=group_size, axis=-1, dtype=qint4,
                                                           qscheme=per_channel_symmetric))
