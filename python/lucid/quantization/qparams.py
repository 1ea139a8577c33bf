"""Scale and zero point from an observed range, as PyTorch's observers compute them.

All arithmetic is float32 (numpy's float32 operations are correctly rounded,
``np.rint`` rounds half to even), so the result is the same whichever stream
holds ``min_val`` / ``max_val``; the formulas are in docs/numerics.md.
"""
from __future__ import annotations

import numbers
from typing import Optional

import numpy as np

from .. import _C
from .._tensor import Tensor
from .qdtype import QDtype, QScheme, as_qdtype, as_qscheme

__all__ = ["QParams", "calculate_qparams"]

_EPS = float(np.finfo(np.float32).eps)  # 2^-23
_MIN_NORMAL32 = float(np.finfo(np.float32).tiny)  # 2^-126


class QParams(tuple):
    """``scale`` (float32 tensor) and ``zero_point`` (int32 tensor): it unpacks as
    ``scale, zero_point``, as observers' ``calculate_qparams`` results do. The grid
    (``qdtype``), the scheme and, for per-channel schemes, the channel axis the parameters
    apply along (``ch_axis``) are attributes."""

    def __new__(cls, scale, zero_point, qdtype: QDtype, qscheme: QScheme, ch_axis: Optional[int] = None):
        self = super().__new__(cls, (scale, zero_point))
        self.qdtype, self.qscheme, self.ch_axis = qdtype, qscheme, ch_axis
        return self

    def __getnewargs__(self):
        return (self[0], self[1], self.qdtype, self.qscheme, self.ch_axis)

    scale = property(lambda self: self[0])
    zero_point = property(lambda self: self[1])

    def __repr__(self):
        return (f"QParams(scale={self.scale!r}, zero_point={self.zero_point!r}, qdtype={self.qdtype!r}, "
                f"qscheme={self.qscheme!r}, ch_axis={self.ch_axis!r})")


def _host(value, fn, argument):
    if isinstance(value, Tensor):
        if not (value.dtype.is_floating_point or value.dtype.name.startswith(("int", "uint"))):
            raise TypeError(f"{fn}(): argument '{argument}' must be a numeric tensor, got {value.dtype!r}")
        return np.asarray(value.to("cpu").float().numpy(), dtype=np.float32), value.device.type
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return np.asarray(value, dtype=np.float32), None
    raise TypeError(f"{fn}(): argument '{argument}' must be a number or a tensor, got {type(value).__name__}")


def calculate_qparams(min_val, max_val, qdtype, qscheme, eps=_EPS, reduce_range=False, ch_axis=None) -> QParams:
    """``QParams`` for the range ``[min_val, max_val]`` (numbers or 0-d tensors per tensor,
    1-d tensors per channel) on the grid of ``qdtype``.

    ::

        min_neg = min(min_val, 0);  max_pos = max(max_val, 0)
        symmetric: s = max(max(-min_neg, max_pos) / ((qmax - qmin) / 2), eps)
                   z = 0 (signed grids) or (qmin + qmax + 1) // 2 (unsigned)
        affine:    s = max((max_pos - min_neg) / (qmax - qmin), eps)
                   z = clamp(qmin - rint(min_neg / s), qmin, qmax)

    The seed specification's order ``calculate_qparams(min_val, max_val, qscheme, qdtype)``
    (scheme before grid) is accepted too: a ``QScheme`` and a ``QDtype`` are told apart by type.

    ``reduce_range`` halves 8-bit grids (quint8 -> [0, 127], qint8 -> [-64, 63]).
    Per-channel schemes record ``ch_axis`` (default 0). ValueError for NaN or infinite
    ranges, ``min_val > max_val``, mismatched shapes or ``eps <= 0``.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> p = Q.calculate_qparams(-1.0, 3.0, Q.quint8, Q.per_tensor_affine)
    >>> round(p.scale.item(), 7), p.zero_point.item()
    (0.0156863, 64)
    >>> Q.calculate_qparams(-1.0, 3.0, Q.qint8, Q.per_tensor_symmetric).zero_point.item()
    0
    """
    fn = "calculate_qparams"
    if isinstance(qdtype, QScheme) and isinstance(qscheme, QDtype):
        # The seed system's order, calculate_qparams(min_val, max_val, qscheme, qdtype):
        # the two types are distinct, so either order means the same thing.
        qdtype, qscheme = qscheme, qdtype
    qd = as_qdtype(qdtype, fn)
    qs = as_qscheme(qscheme, fn)
    mn, dev_a = _host(min_val, fn, "min_val")
    mx, dev_b = _host(max_val, fn, "max_val")
    device = dev_a or dev_b or "cpu"
    if dev_a and dev_b and dev_a != dev_b:
        raise ValueError(f"{fn}(): 'min_val' is on '{dev_a}' but 'max_val' is on '{dev_b}'")
    if mn.shape != mx.shape:
        raise ValueError(f"{fn}(): 'min_val' has shape {mn.shape} but 'max_val' has shape {mx.shape}")
    if qs.is_per_channel:
        if mn.ndim != 1:
            raise ValueError(f"{fn}(): per-channel schemes take 1-d 'min_val' / 'max_val' (one per channel), "
                             f"got shape {mn.shape}")
        ch_axis = 0 if ch_axis is None else ch_axis
    elif mn.size != 1:
        raise ValueError(f"{fn}(): per-tensor schemes take one 'min_val' / 'max_val', got shape {mn.shape}")
    else:
        mn, mx, ch_axis = mn.reshape(()), mx.reshape(()), None
    if not (np.all(np.isfinite(mn)) and np.all(np.isfinite(mx))):
        raise ValueError(f"{fn}(): 'min_val' and 'max_val' must be finite (observed NaN or inf)")
    if np.any(mn > mx):
        raise ValueError(f"{fn}(): 'min_val' must be <= 'max_val', got {mn.tolist()} > {mx.tolist()}")
    if not isinstance(eps, numbers.Real) or isinstance(eps, bool) or not eps > 0:
        raise ValueError(f"{fn}(): argument 'eps' must be a positive number, got {eps!r}")
    # eps is the smallest scale this can return, and scales must be finite normal
    # float32 (docs/numerics.md): an eps that rounds to 0 or a subnormal in float32
    # would let a constant-zero range produce an unusable scale.
    if not _MIN_NORMAL32 <= float(np.float32(eps)) < float("inf"):
        raise ValueError(f"{fn}(): argument 'eps' must be a finite float32 of at least 2^-126 "
                         f"(the smallest normal float32), got {eps!r}")
    qmin, qmax = qd.reduced_range() if reduce_range else (qd.quant_min, qd.quant_max)
    f32 = np.float32
    zero = f32(0.0)
    min_neg = np.minimum(mn, zero)
    max_pos = np.maximum(mx, zero)
    eps32 = f32(eps)
    if qs.is_symmetric:
        amax = np.maximum(-min_neg, max_pos)
        scale = np.maximum(amax / f32((qmax - qmin) / 2), eps32)
        zp = np.full(mn.shape, 0 if qd.signed else (qmin + qmax + 1) // 2, dtype=np.int64)
    else:
        scale = np.maximum((max_pos - min_neg) / f32(qmax - qmin), eps32)
        r = np.rint(min_neg / scale).astype(np.float64)  # float32 quotient, exact widening
        zp = np.clip(np.float64(qmin) - r, qmin, qmax).astype(np.int64)
    scale = np.asarray(scale, dtype=np.float32)
    zp = np.asarray(zp, dtype=np.int32)
    s_t = _C.to_device(_C.from_numpy(np.array(scale, dtype=np.float32, copy=True)), device)
    z_t = _C.to_device(_C.from_numpy(np.array(zp, dtype=np.int32, copy=True)), device)
    return QParams(s_t, z_t, qd, qs, ch_axis)
