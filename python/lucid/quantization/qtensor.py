"""``QTensor``: a quantized activation — integer codes in their real storage dtype
plus the scale, zero point and scheme that map them to reals.

Quantized modules (``lucid.nn.quantized``) take and return QTensors, so
activations stay integer between them; ``dequantize()`` (or the
``DeQuantize`` module) is the only place floats come back. Methods carry
PyTorch's names (``int_repr``, ``q_scale``, ``q_per_channel_scales``...).

>>> import lucid
>>> import lucid.quantization as Q
>>> q = Q.quantize_per_tensor(lucid.tensor([-1.0, 0.0, 0.5]), 0.5, 2, Q.quint8)
>>> q.int_repr().tolist(), q.q_scale(), q.q_zero_point()
([0, 2, 3], 0.5, 2)
>>> q.dequantize().tolist()
[-1.0, 0.0, 0.5]
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .._tensor import Tensor
from .primitives import dequantize as _dequantize
from .primitives import quantize as _quantize
from .qdtype import QDtype, as_qdtype, per_channel_affine, per_tensor_affine

__all__ = ["QTensor", "quantize_per_tensor", "quantize_per_channel"]


def _scale_value(scale, fn: str) -> float:
    if isinstance(scale, Tensor):
        if scale.numel() != 1:
            raise ValueError(f"{fn}(): a per-tensor 'scale' must hold one value, got shape {tuple(scale.shape)}")
        scale = scale.item()
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"{fn}(): argument 'scale' must be a number, got {type(scale).__name__}")
    s = float(np.float32(scale))
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"{fn}(): argument 'scale' must be finite and > 0, got {scale!r}")
    return s


def _zp_value(zero_point, qd: QDtype, fn: str) -> int:
    if isinstance(zero_point, Tensor):
        if zero_point.numel() != 1:
            raise ValueError(f"{fn}(): a per-tensor 'zero_point' must hold one value, got shape "
                             f"{tuple(zero_point.shape)}")
        zero_point = zero_point.item()
    if isinstance(zero_point, bool) or not isinstance(zero_point, numbers.Real) or not math.isfinite(zero_point) \
            or int(zero_point) != zero_point:
        raise TypeError(f"{fn}(): argument 'zero_point' must be an integer, got {zero_point!r}")
    z = int(zero_point)
    if qd.is_floating and z != 0:
        raise ValueError(f"{fn}(): argument 'zero_point' must be 0 for the float grid {qd.name}, got {z}")
    if not qd.quant_min <= z <= qd.quant_max:
        raise ValueError(f"{fn}(): argument 'zero_point' must lie in [{qd.quant_min}, {qd.quant_max}] for "
                         f"{qd.name}, got {z}")
    return z


def _check_channel_qparams(scale: Tensor, zero_point: Tensor, qd: QDtype, fn: str) -> None:
    """The per-channel form of the per-tensor checks: scales finite and > 0, zero points
    integers (a float tensor must hold whole numbers) on the grid."""
    s = np.asarray(scale.detach().to("cpu").numpy(), dtype=np.float64)
    if not (np.isfinite(s).all() and (s > 0).all()):
        raise ValueError(f"{fn}(): argument 'scale' must be finite and > 0 in every channel, got {s.tolist()}")
    z = np.asarray(zero_point.detach().to("cpu").numpy())
    if zero_point.dtype.is_floating_point or z.dtype.kind == "b":
        zf = z.astype(np.float64)
        if z.dtype.kind == "b" or not (np.isfinite(zf).all() and (zf == np.floor(zf)).all()):
            raise TypeError(f"{fn}(): argument 'zero_point' must hold integers, got {z.tolist()}")
    z = z.astype(np.float64)
    if z.size and not (qd.quant_min <= z.min() and z.max() <= qd.quant_max):
        raise ValueError(f"{fn}(): argument 'zero_point' must lie in [{qd.quant_min}, {qd.quant_max}] for "
                         f"{qd.name}, got {z.astype(np.int64).tolist()}")


class QTensor:
    """Integer codes ``int_repr()`` (dtype ``qdtype.storage``) with per-tensor
    ``(scale, zero_point)`` (a float32-exact Python float and an int) or per-channel
    ones (float32 / int32 tensors along ``axis``). ``real = (code - zero_point) * scale``.

    Build one with ``quantize_per_tensor`` / ``quantize_per_channel`` or
    ``QTensor(codes, scale, zero_point, qdtype)``; ValueError / TypeError name the
    argument that is wrong (codes of another dtype, a scale that is not > 0, a zero
    point off the grid).
    """

    __slots__ = ("_codes", "_scale", "_zero_point", "_qdtype", "_axis")

    def __init__(self, codes, scale, zero_point, qdtype, axis=None):
        fn = "QTensor"
        qd = as_qdtype(qdtype, fn)
        if not isinstance(codes, Tensor):
            raise TypeError(f"{fn}(): argument 'codes' must be a lucid.Tensor, got {type(codes).__name__}")
        if codes.dtype != qd.storage:
            raise TypeError(f"{fn}(): codes of {qd.name} must be stored as {qd.storage!r}, got {codes.dtype!r}")
        if axis is None:
            self._scale = _scale_value(scale, fn)
            self._zero_point = _zp_value(zero_point, qd, fn)
        else:
            if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
                raise TypeError(f"{fn}(): argument 'axis' must be an int or None, got {type(axis).__name__}")
            axis = int(axis) + (codes.ndim if axis < 0 else 0)
            if not 0 <= axis < codes.ndim:
                raise ValueError(f"{fn}(): argument 'axis' is out of range for a {codes.ndim}-d tensor")
            if not isinstance(scale, Tensor) or not isinstance(zero_point, Tensor):
                raise TypeError(f"{fn}(): per-channel 'scale' and 'zero_point' must be tensors")
            c = codes.shape[axis]
            if tuple(scale.shape) != (c,) or tuple(zero_point.shape) != (c,):
                raise ValueError(f"{fn}(): per-channel 'scale' / 'zero_point' must have shape ({c},), got "
                                 f"{tuple(scale.shape)} / {tuple(zero_point.shape)}")
            _check_channel_qparams(scale, zero_point, qd, fn)
            self._scale = scale.to(device=codes.device, dtype="float32")
            self._zero_point = zero_point.to(device=codes.device, dtype="int32")
        self._codes = codes
        self._qdtype = qd
        self._axis = axis

    # ----- PyTorch's accessors --------------------------------------------------------
    def int_repr(self) -> Tensor:
        """The integer codes (a lucid.Tensor of ``qdtype.storage``)."""
        return self._codes

    def qscheme(self):
        return per_tensor_affine if self._axis is None else per_channel_affine

    def _per_tensor(self, fn):
        if self._axis is not None:
            raise RuntimeError(f"QTensor.{fn}(): this tensor is quantized per channel; use q_per_channel_*()")

    def _per_channel(self, fn):
        if self._axis is None:
            raise RuntimeError(f"QTensor.{fn}(): this tensor is quantized per tensor; use q_scale() / "
                               "q_zero_point()")

    def q_scale(self) -> float:
        self._per_tensor("q_scale")
        return self._scale

    def q_zero_point(self) -> int:
        self._per_tensor("q_zero_point")
        return self._zero_point

    def q_per_channel_scales(self) -> Tensor:
        self._per_channel("q_per_channel_scales")
        return self._scale

    def q_per_channel_zero_points(self) -> Tensor:
        self._per_channel("q_per_channel_zero_points")
        return self._zero_point

    def q_per_channel_axis(self) -> int:
        self._per_channel("q_per_channel_axis")
        return self._axis

    def dequantize(self) -> Tensor:
        """float32 ``(code - zero_point) * scale`` (docs/numerics.md, dequantize)."""
        qd = self._qdtype if self._qdtype.is_floating else None
        return _dequantize(self._codes, self._scale, self._zero_point, ch_axis=self._axis, qdtype=qd)

    # ----- tensor-like ----------------------------------------------------------------
    @property
    def dtype(self) -> QDtype:
        """The grid (``lucid.quantization.quint8``...), as PyTorch's ``torch.quint8``."""
        return self._qdtype

    @property
    def shape(self):
        return self._codes.shape

    @property
    def ndim(self) -> int:
        return self._codes.ndim

    @property
    def device(self):
        return self._codes.device

    @property
    def is_quantized(self) -> bool:
        return True

    def dim(self) -> int:
        return self._codes.ndim

    def size(self, dim=None):
        return self._codes.shape if dim is None else self._codes.shape[dim]

    def numel(self) -> int:
        return self._codes.numel()

    @classmethod
    def _checked(cls, codes, scale: float, zero_point: int, qdtype: QDtype) -> "QTensor":
        """A per-tensor QTensor from parts already known good (the quantized modules' hot
        path: a kernel validated them): ``codes`` a Tensor of ``qdtype.storage``, ``scale``
        a float32-exact float > 0, ``zero_point`` an int on the grid. No checks."""
        out = cls.__new__(cls)
        out._codes, out._scale, out._zero_point, out._qdtype, out._axis = codes, scale, zero_point, qdtype, None
        return out

    def _same_params(self, codes) -> "QTensor":
        if self._axis is not None or not isinstance(codes, Tensor) or codes.dtype != self._qdtype.storage:
            return QTensor(codes, self._scale, self._zero_point, self._qdtype, self._axis)  # checks and raises
        # The per-tensor qparams were validated when self was built: skip re-checking them.
        return QTensor._checked(codes, self._scale, self._zero_point, self._qdtype)

    def to(self, device) -> "QTensor":
        """A copy on ``device`` (codes and per-channel parameters move; the values are unchanged)."""
        if self._axis is None:
            return self._same_params(self._codes.to(device))
        codes = self._codes.to(device)
        return QTensor(codes, self._scale.to(device), self._zero_point.to(device), self._qdtype, self._axis)

    def cpu(self) -> "QTensor":
        return self.to("cpu")

    def _layout_op(self, fn):
        if self._axis is not None:
            raise NotImplementedError("QTensor: reshaping a per-channel quantized tensor is not supported")
        return self._same_params(fn(self._codes))

    def reshape(self, *shape) -> "QTensor":
        return self._layout_op(lambda c: c.reshape(*shape))

    view = reshape

    def flatten(self, start_dim=0, end_dim=-1) -> "QTensor":
        return self._layout_op(lambda c: c.flatten(start_dim, end_dim))

    def clone(self) -> "QTensor":
        if self._axis is None:
            return self._same_params(self._codes.clone())
        return QTensor(self._codes.clone(), self._scale.clone(), self._zero_point.clone(), self._qdtype, self._axis)

    def tolist(self):
        """The codes as nested lists (the integer representation)."""
        return self._codes.tolist()

    def __len__(self):
        return len(self._codes)

    def __repr__(self) -> str:
        if self._axis is None:
            params = f"scale={self._scale!r}, zero_point={self._zero_point}"
        else:
            params = f"axis={self._axis}, scales={self._scale.tolist()}, zero_points={self._zero_point.tolist()}"
        return (f"QTensor(shape={tuple(self.shape)}, dtype={self._qdtype!r}, {params}, "
                f"device={self.device})")


def quantize_per_tensor(x, scale, zero_point, dtype) -> QTensor:
    """``QTensor`` of ``quantize(x, scale, zero_point, dtype)`` (PyTorch's ``torch.quantize_per_tensor``).

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> Q.quantize_per_tensor(lucid.tensor([1.0, 300.0]), 2.0, 0, Q.quint8).int_repr().tolist()
    [0, 150]
    """
    qd = as_qdtype(dtype, "quantize_per_tensor", "dtype")
    s = _scale_value(scale, "quantize_per_tensor")
    z = _zp_value(zero_point, qd, "quantize_per_tensor")
    return QTensor(_quantize(x, s, z, qd), s, z, qd)


def quantize_per_channel(x, scales, zero_points, axis, dtype) -> QTensor:
    """``QTensor`` quantized with one ``(scale, zero_point)`` per index along ``axis``
    (PyTorch's ``torch.quantize_per_channel``).

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> q = Q.quantize_per_channel(lucid.tensor([[1.0, 2.0], [1.0, 2.0]]), lucid.tensor([1.0, 0.5]),
    ...                            lucid.tensor([0, 0]), 0, Q.qint8)
    >>> q.int_repr().tolist(), q.q_per_channel_axis()
    ([[1, 2], [2, 4]], 0)
    """
    qd = as_qdtype(dtype, "quantize_per_channel", "dtype")
    if isinstance(x, Tensor):
        scales = scales.to(x.device) if isinstance(scales, Tensor) else scales
        zero_points = zero_points.to(x.device) if isinstance(zero_points, Tensor) else zero_points
    codes = _quantize(x, scales, zero_points, qd, ch_axis=axis)
    return QTensor(codes, scales, zero_points, qd, axis)
