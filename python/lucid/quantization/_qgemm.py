"""Upstream lucid's ``lucid.quantization._qgemm`` call forms over MLX's group-wise
affine format (``group_affine``): ``quantize`` / ``dequantize`` / ``quantized_matmul``
with upstream's argument names and defaults (8 bits, groups of 64).

Upstream runs these on Metal only; here they run on both streams, with the codes,
scales and biases of ``group_affine`` (bit-identical on both, equal to
``mlx.core.quantize`` on MLX's CPU device). ``quantized_matmul`` with
``transpose=True`` is ``group_quantized_linear``; with ``transpose=False`` it
contracts against the dequantized weight (``x @ W``), on either stream.
"""
from __future__ import annotations

from .. import _C
from .group_affine import group_dequantize, group_quantize, group_quantized_linear

__all__ = ["is_available", "quantize", "dequantize", "quantized_matmul"]


def is_available() -> bool:
    """True: the format's kernels are part of lucid's own extension on every host
    (upstream: whether its engine was built with MLX's quantized ops)."""
    return True


def quantize(w, group_size: int = 64, bits: int = 8):
    """``(packed, scales, biases)`` of a float32 ``(out, in)`` weight (``group_quantize``)."""
    return group_quantize(w, group_size, bits)


def dequantize(wq, scales, biases, group_size: int = 64, bits: int = 8):
    """The float32 weight the packed words hold (``group_dequantize``)."""
    return group_dequantize(wq, scales, biases, group_size, bits)


def quantized_matmul(x, wq, scales, biases, transpose: bool = True, group_size: int = 64, bits: int = 8):
    """``x @ W.T`` (``transpose=True``, a linear layer's ``(out, in)`` layout) or ``x @ W``
    (``transpose=False``) with ``W`` the packed weight; float results, not differentiable."""
    if not isinstance(transpose, bool):
        raise TypeError(f"quantized_matmul(): argument 'transpose' must be a bool, got {type(transpose).__name__}")
    if transpose:
        return group_quantized_linear(x, wq, scales, biases, group_size, bits)
    return _C.matmul(x, group_dequantize(wq, scales, biases, group_size, bits))
