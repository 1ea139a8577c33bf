"""torchao's affine quantization primitives under torchao's names: ``MappingType``,
``ZeroPointDomain``, the granularities (``PerTensor``, ``PerAxis``, ``PerGroup``,
``PerRow``, ``PerToken``), ``get_block_size``, ``choose_qparams_affine``,
``quantize_affine`` and ``dequantize_affine`` (docs/quantization_llm.md).

A ``block_size`` tuple (one entry per input dimension) says which elements share one
``(scale, zero_point)``: ``(1, K)`` of an ``(N, K)`` weight is per row, ``(1, 32)``
per group of 32 along K, the full shape per tensor.

Every step is an elementwise IEEE operation or an exact min / max, run with lucid's
kernels on the stream holding the input, so the codes, scales and zero points are
bit-identical on the CPU and GPU streams (docs/numerics.md):

* ``choose_qparams_affine``: ``lo = min(amin, 0)``, ``hi = max(amax, 0)``; SYMMETRIC:
  ``scale = max(-lo, hi) / ((qmax - qmin) / 2)``, ``zero_point = int((qmax + qmin + 1) / 2)``;
  SYMMETRIC_NO_CLIPPING_ERR: ``scale = max(lo / qmin, hi / qmax)``; ASYMMETRIC:
  ``scale = (hi - lo) / (qmax - qmin)``; then ``scale = max(scale, eps)`` (eps defaults to
  float32's smallest normal, 2^-126) and, asymmetric, ``zero_point = clamp(qmin -
  round(lo / scale), qmin, qmax)``. ``preserve_zero=False`` skips the clamp of the range
  to 0; with ``ZeroPointDomain.FLOAT`` the zero point is the float ``lo + scale * mid``,
  ``mid = (qmax + qmin + 1) / 2``; with ``NONE`` there is none.
* ``quantize_affine``: INT / NONE: ``clamp(round(x * (1 / scale)) + zero_point, qmin, qmax)``
  (a reciprocal then a product, not a division, as torchao computes it); FLOAT:
  ``clamp(round((x - (zero_point - scale * mid)) / scale), qmin, qmax)``.
* ``dequantize_affine``: INT: ``(float(q) - float(zero_point)) * scale``; FLOAT:
  ``float(q - mid) * scale + zero_point``; NONE: ``float(q) * scale``.

``round`` is round-half-to-even (``torch.round``'s). Target dtypes: ``lucid.int8``,
``lucid.uint8``, ``lucid.int16``, ``lucid.int32``, a lucid ``QDtype`` (``Q.qint4`` ...) or
torchao's sub-byte names as strings ``"int1"`` ... ``"int7"``, ``"uint1"`` ... ``"uint7"``
(codes held in int8 / uint8).

>>> import lucid
>>> import lucid.quantization as Q
>>> w = lucid.tensor([[-1.0, 0.5, 2.0, 0.25]])
>>> s, z = Q.choose_qparams_affine(w, Q.MappingType.SYMMETRIC, (1, 4), lucid.int8)
>>> s.tolist(), z.tolist()
([0.01568627543747425], [0])
>>> Q.quantize_affine(w, (1, 4), s, z, lucid.int8).tolist()
[[-64, 32, 127, 16]]
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto

import lucid._namespace as lucid
from .qdtype import QDtype

__all__ = ["MappingType", "ZeroPointDomain", "Granularity", "PerTensor", "PerAxis", "PerGroup", "PerRow",
           "PerToken", "get_block_size", "choose_qparams_affine", "quantize_affine", "dequantize_affine",
           "qvalue_bounds"]

_F32_SMALLEST_NORMAL = 2.0 ** -126
F32_EPS = 2.0 ** -23  # torch.finfo(torch.float32).eps, what torchao's int8 configs pass


class MappingType(Enum):
    """How a float range maps onto the integer grid: SYMMETRIC (range ``[-m, m]``, ``m``
    the larger magnitude), SYMMETRIC_NO_CLIPPING_ERR (the scale is the larger of
    ``min / qmin`` and ``max / qmax``, so neither end is clipped), ASYMMETRIC (the range
    ``[min, max]`` itself)."""
    SYMMETRIC = auto()
    SYMMETRIC_NO_CLIPPING_ERR = auto()
    ASYMMETRIC = auto()


class ZeroPointDomain(Enum):
    """Where the zero point lives: INT (added to the rounded integer), FLOAT (subtracted
    from the float value before rounding: ``q = round((x - (zp - scale * mid)) / scale)``),
    NONE (no zero point)."""
    INT = auto()
    FLOAT = auto()
    NONE = auto()


class Granularity:
    """Base of the granularities; ``get_block_size`` turns one into a ``block_size``."""


@dataclass(frozen=True)
class PerTensor(Granularity):
    """One ``(scale, zero_point)`` for the whole tensor."""


@dataclass(frozen=True)
class PerAxis(Granularity):
    """One pair per index of ``axis`` (``PerAxis(0)`` of a weight: per output channel)."""
    axis: int


@dataclass(frozen=True)
class PerGroup(Granularity):
    """One pair per run of ``group_size`` elements along the last axis."""
    group_size: int


@dataclass(frozen=True)
class PerRow(Granularity):
    """One pair per row: every element along ``dim`` (default the last) shares it."""
    dim: int = -1


@dataclass(frozen=True)
class PerToken(Granularity):
    """Activations: one pair per token (every axis but the last is 1 in the block)."""


def get_block_size(shape, granularity):
    """The ``block_size`` tuple of ``granularity`` for a tensor of ``shape``."""
    shape = tuple(int(s) for s in shape)
    if isinstance(granularity, PerTensor):
        return shape
    if isinstance(granularity, PerAxis):
        ax = granularity.axis % len(shape)
        return tuple(1 if i == ax else s for i, s in enumerate(shape))
    if isinstance(granularity, PerGroup):
        g = granularity.group_size
        if not isinstance(g, int) or isinstance(g, bool) or g < 1 or shape[-1] % g:
            raise ValueError(f"get_block_size(): PerGroup group_size must be a positive int dividing the last "
                             f"dimension {shape[-1]}, got {g!r}")
        return (1,) * (len(shape) - 1) + (g,)
    if isinstance(granularity, (PerRow, PerToken)):
        dim = -1 if isinstance(granularity, PerToken) else granularity.dim
        dim = dim % len(shape)
        return tuple(s if i == dim else 1 for i, s in enumerate(shape))
    raise TypeError(f"get_block_size(): argument 'granularity' must be PerTensor, PerAxis, PerGroup, PerRow or "
                    f"PerToken, got {type(granularity).__name__}")


_BOUNDS = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-2 ** 15, 2 ** 15 - 1),
           "int32": (-2 ** 31, 2 ** 31 - 1)}
_STORAGE = {"int8": "int8", "uint8": "uint8", "int16": "int16", "int32": "int32"}
for _b in range(1, 8):
    _BOUNDS[f"int{_b}"] = (-2 ** (_b - 1), 2 ** (_b - 1) - 1)
    _BOUNDS[f"uint{_b}"] = (0, 2 ** _b - 1)
    _STORAGE[f"int{_b}"], _STORAGE[f"uint{_b}"] = "int8", "uint8"


def _dtype_key(fn, dtype, arg="target_dtype"):
    if isinstance(dtype, QDtype):
        if dtype.name in ("qint4", "quint4", "qint8", "quint8", "qint32"):
            return {"qint4": "int4", "quint4": "uint4", "qint8": "int8", "quint8": "uint8", "qint32": "int32"}[dtype.name]
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if isinstance(name, str):
        name = name.replace("torch.", "")
    if name not in _BOUNDS:
        raise ValueError(f"{fn}(): argument '{arg}' must be an integer grid (lucid.int8, lucid.uint8, lucid.int16, "
                         f"lucid.int32, a QDtype, or 'int1'..'int7' / 'uint1'..'uint7'), got {dtype!r}")
    return name


def qvalue_bounds(dtype):
    """``(quant_min, quant_max)`` of a target dtype (torchao's ``_DTYPE_TO_QVALUE_BOUNDS``)."""
    return _BOUNDS[_dtype_key("qvalue_bounds", dtype, "dtype")]


def _qmin_qmax(fn, dtype, quant_min, quant_max):
    key = _dtype_key(fn, dtype)
    lo, hi = _BOUNDS[key]
    qmin = lo if quant_min is None else quant_min
    qmax = hi if quant_max is None else quant_max
    for name, v in (("quant_min", qmin), ("quant_max", qmax)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{fn}(): argument '{name}' must be an int, got {v!r}")
    if qmin < lo or qmax > hi or qmin >= qmax:
        raise ValueError(f"{fn}(): quant_min / quant_max must satisfy {lo} <= quant_min < quant_max <= {hi} for "
                         f"{key}, got ({qmin}, {qmax})")
    return key, qmin, qmax


def _reduction(fn, block_size, shape):
    """torchao's ``_get_reduction_params``: the shape to view the input as, and the
    dimensions of that view to reduce."""
    if not isinstance(block_size, (tuple, list)) or len(block_size) != len(shape):
        raise ValueError(f"{fn}(): argument 'block_size' must have one entry per input dimension ({len(shape)}), "
                         f"got {block_size!r}")
    view, dims = [], []
    for b, s in zip(block_size, shape):
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise ValueError(f"{fn}(): block_size entries must be positive ints, got {block_size!r}")
        if b != s and b > 1:
            if s % b:
                raise ValueError(f"{fn}(): block_size {tuple(block_size)} does not divide the input shape "
                                 f"{tuple(shape)}")
            view += [s // b, b]
            dims.append(len(view) - 1)
        else:
            view.append(s)
            if b != 1:
                dims.append(len(view) - 1)
    return view, dims


def _float_input(fn, x):
    if not isinstance(x, lucid.Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a lucid.Tensor, got {type(x).__name__}")
    if x.dtype not in (lucid.float32, lucid.float16, lucid.bfloat16):
        raise TypeError(f"{fn}(): argument 'input' must be float32, float16 or bfloat16, got {x.dtype}")
    return x


def _as_param(fn, name, p, like):
    if isinstance(p, lucid.Tensor):
        return p if p.device == like.device else p.to(like.device)
    if isinstance(p, (int, float)) and not isinstance(p, bool):
        return lucid.tensor(float(p)).to(like.device)
    raise TypeError(f"{fn}(): argument '{name}' must be a lucid.Tensor or a number, got {type(p).__name__}")


def _reduced_view(fn, p, name, view, dims):
    after = [1 if i in dims else v for i, v in enumerate(view)]
    n = 1
    for v in after:
        n *= v
    if p.numel() != n:
        raise ValueError(f"{fn}(): argument '{name}' has {p.numel()} elements, the block_size gives {n}")
    return p.reshape(after)


def _domain(fn, d):
    if not isinstance(d, ZeroPointDomain):
        raise TypeError(f"{fn}(): argument 'zero_point_domain' must be a ZeroPointDomain, got {d!r}")
    return d


def choose_qparams_affine(input, mapping_type, block_size, target_dtype, quant_min=None, quant_max=None, eps=None,
                          scale_dtype=None, zero_point_dtype=None, preserve_zero=True,
                          zero_point_domain=ZeroPointDomain.INT, keepdim=False):
    """``(scale, zero_point)`` for each block of ``input`` (see the module docstring).
    Shapes: ``input``'s with each blocked dimension divided by its block size; the
    reduced dimensions are dropped unless ``keepdim``. ``scale_dtype`` defaults to the
    input's dtype, ``zero_point_dtype`` to int32 (float, the input's, in the FLOAT
    domain). ``zero_point`` is None in the NONE domain."""
    fn = "choose_qparams_affine"
    x = _float_input(fn, input)
    if not isinstance(mapping_type, MappingType):
        raise TypeError(f"{fn}(): argument 'mapping_type' must be a MappingType, got {mapping_type!r}")
    _, qmin, qmax = _qmin_qmax(fn, target_dtype, quant_min, quant_max)
    dom = _domain(fn, zero_point_domain)
    eps = _F32_SMALLEST_NORMAL if eps is None else float(eps)
    if not eps > 0:
        raise ValueError(f"{fn}(): argument 'eps' must be positive, got {eps!r}")
    view, dims = _reduction(fn, block_size, x.shape)
    xf = x.to(lucid.float32).reshape(view)
    if dims:
        mn = lucid.amin(xf, dim=tuple(dims), keepdim=True)
        mx = lucid.amax(xf, dim=tuple(dims), keepdim=True)
    else:
        mn, mx = xf, xf
    if preserve_zero:
        lo, hi = lucid.clamp(mn, max=0.0), lucid.clamp(mx, min=0.0)
    else:
        lo, hi = mn, mx
    mid = (qmax + qmin + 1) / 2
    if mapping_type is not MappingType.ASYMMETRIC:
        if not preserve_zero:
            raise ValueError(f"{fn}(): preserve_zero=False is not supported for symmetric mapping")
        if dom is ZeroPointDomain.FLOAT:
            raise ValueError(f"{fn}(): ZeroPointDomain.FLOAT is not supported for symmetric mapping")
        if mapping_type is MappingType.SYMMETRIC:
            scale = lucid.maximum(-lo, hi) / (float(qmax - qmin) / 2)
        else:
            smin, smax = lo / float(qmin), hi / float(qmax)
            scale = lucid.where(smin > smax, smin, smax)
        scale = lucid.clamp(scale, min=eps)
        zp = None if dom is ZeroPointDomain.NONE else lucid.full_like(scale, float(int(mid)))
    else:
        scale = lucid.clamp((hi - lo) / float(qmax - qmin), min=eps)
        if dom is ZeroPointDomain.NONE:
            zp = None
        elif dom is ZeroPointDomain.FLOAT:
            zp = lo + scale * mid
        else:
            zp = lucid.clamp(float(qmin) - lucid.round(lo / scale), float(qmin), float(qmax))
    out_shape = ([x.shape[i] // block_size[i] for i in range(x.ndim)] if keepdim
                 else [v for i, v in enumerate(view) if i not in dims])
    scale = scale.reshape(out_shape).to(x.dtype if scale_dtype is None else scale_dtype)
    if zp is not None:
        zdt = zero_point_dtype
        if zdt is None:
            zdt = x.dtype if dom is ZeroPointDomain.FLOAT else lucid.int32
        zp = zp.reshape(out_shape).to(zdt)
    return scale, zp


def quantize_affine(input, block_size, scale, zero_point, output_dtype, quant_min=None, quant_max=None,
                    zero_point_domain=ZeroPointDomain.INT):
    """Integer codes of ``input`` on the grid (see the module docstring), dtype
    ``output_dtype``'s storage (int8 for ``"int1"`` .. ``"int7"`` and ``Q.qint4``, uint8 for
    the unsigned sub-byte grids), ``input``'s shape. ``zero_point`` may be None (as 0)."""
    fn = "quantize_affine"
    x = _float_input(fn, input)
    key, qmin, qmax = _qmin_qmax(fn, output_dtype, quant_min, quant_max)
    dom = _domain(fn, zero_point_domain)
    view, dims = _reduction(fn, block_size, x.shape)
    xf = x.to(lucid.float32).reshape(view)
    s = _reduced_view(fn, _as_param(fn, "scale", scale, x), "scale", view, dims).to(lucid.float32)
    z = None
    if zero_point is not None and dom is not ZeroPointDomain.NONE:
        z = _reduced_view(fn, _as_param(fn, "zero_point", zero_point, x), "zero_point", view, dims)
        z = z.to(lucid.float32)
    if dom is ZeroPointDomain.FLOAT:
        if z is None:
            raise ValueError(f"{fn}(): ZeroPointDomain.FLOAT needs a zero_point")
        mid = (qmax + qmin + 1) / 2
        q = lucid.round((xf - (z - s * mid)) / s)
    else:
        q = lucid.round(xf * lucid.reciprocal(s))
        if z is not None:
            q = q + z
    q = lucid.clamp(q, float(qmin), float(qmax))
    return q.reshape(x.shape).to(getattr(lucid, _STORAGE[key]))


def dequantize_affine(input, block_size, scale, zero_point, input_dtype=None, quant_min=None, quant_max=None,
                      zero_point_domain=ZeroPointDomain.INT, *, output_dtype=None):
    """Float values of the codes ``input`` (see the module docstring); ``output_dtype``
    defaults to float32. ``input_dtype`` names the grid (needed for the FLOAT domain's
    midpoint; defaults to the codes' storage dtype)."""
    fn = "dequantize_affine"
    if not isinstance(input, lucid.Tensor) or input.dtype.is_floating_point:
        raise TypeError(f"{fn}(): argument 'input' must be a lucid.Tensor of integer codes, got "
                        f"{getattr(input, 'dtype', type(input).__name__)}")
    key, qmin, qmax = _qmin_qmax(fn, input.dtype if input_dtype is None else input_dtype, quant_min, quant_max)
    dom = _domain(fn, zero_point_domain)
    out = lucid.float32 if output_dtype is None else output_dtype
    view, dims = _reduction(fn, block_size, input.shape)
    q = input.reshape(view)
    s = _reduced_view(fn, _as_param(fn, "scale", scale, input), "scale", view, dims).to(lucid.float32)
    z = None
    if zero_point is not None and dom is not ZeroPointDomain.NONE:
        z = _reduced_view(fn, _as_param(fn, "zero_point", zero_point, input), "zero_point", view, dims)
    if dom is ZeroPointDomain.FLOAT:
        mid = (qmax + qmin + 1) / 2
        y = (q.to(lucid.float32) - mid) * s
        if z is not None:
            y = y + z.to(lucid.float32)
    else:
        y = q.to(lucid.float32)
        if z is not None:
            y = y - z.to(lucid.float32)
        y = y * s
    return y.reshape(input.shape).to(out)

