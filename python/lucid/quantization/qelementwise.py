"""QFunctional's ops on per-tensor quantized codes, each one fused pass of
``csrc/ops/qelementwise.cpp``: the codes of ``quantize(op(dequantize(a), dequantize(b)),
scale, zero_point)`` computed with exactly the float32 operations of that composite
(docs/numerics.md, "Quantized modules"), so they equal its codes bit for bit on either
stream. Inputs are int8 / uint8 code tensors with their scale (a float) and zero point
(an int); the output grid ``qdtype`` is one stored in 8 bits (quint8, qint8, ...).

>>> import lucid
>>> from lucid.quantization.qelementwise import qadd
>>> a = lucid.tensor([10, 20, 0], dtype=lucid.uint8)
>>> b = lucid.tensor([5, 0, 0], dtype=lucid.uint8)
>>> qadd(a, 0.5, 10, b, 1.0, 0, 0.25, 0, "quint8", relu=True).tolist()
[20, 20, 0]
"""
from __future__ import annotations

from .. import _C
from .._tensor import Tensor
from .qdtype import as_qdtype

__all__ = ["qadd", "qmul", "qcat"]


def _codes(x, fn: str, argument: str):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a lucid.Tensor of codes, got {type(x).__name__}")
    return x._impl


def _grid(qdtype, fn: str) -> str:
    return qdtype if type(qdtype) is str else as_qdtype(qdtype, fn, "qdtype").name


def qadd(a, a_scale, a_zero_point, b, b_scale, b_zero_point, scale, zero_point, qdtype="quint8", relu=False):
    """Codes of ``quantize(dequantize(a) + dequantize(b))`` (``relu``: of ``relu(...)``) on
    ``qdtype`` with ``(scale, zero_point)``. ``a``, ``b``: codes of one shape and dtype.
    TypeError / ValueError name the argument that is wrong."""
    fn = "qadd_relu" if relu else "qadd"
    return Tensor(_C.qadd(_codes(a, fn, "a"), a_scale, a_zero_point, _codes(b, fn, "b"), b_scale, b_zero_point,
                          scale, zero_point, _grid(qdtype, fn), bool(relu)))


def qmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, scale, zero_point, qdtype="quint8"):
    """Codes of ``quantize(dequantize(a) * dequantize(b))`` on ``qdtype`` with ``(scale, zero_point)``."""
    fn = "qmul"
    return Tensor(_C.qmul(_codes(a, fn, "a"), a_scale, a_zero_point, _codes(b, fn, "b"), b_scale, b_zero_point,
                          scale, zero_point, _grid(qdtype, fn)))


def qcat(xs, scales, zero_points, dim, scale, zero_point, qdtype="quint8"):
    """Codes of ``quantize(cat([dequantize(x) for x in xs], dim))``: each input's codes
    requantized onto ``(scale, zero_point)`` straight into its slice of the output."""
    fn = "qcat"
    impls = [_codes(x, fn, "xs") for x in xs]
    return Tensor(_C.qcat(impls, [float(s) for s in scales], [int(z) for z in zero_points], int(dim), scale,
                          zero_point, _grid(qdtype, fn)))
