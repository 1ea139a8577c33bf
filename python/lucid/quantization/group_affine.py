"""MLX's group-wise affine weight format (``mlx.core.quantize``'s "affine" mode).

Along the last axis of an ``(N, K)`` weight, each group of ``group_size``
values gets a float ``scale`` and ``bias``: ``w ~ q * scale + bias`` with codes
``q`` in ``[0, 2^bits - 1]``, a row's codes one bit stream (code ``k`` at bit
``k * bits``, 32 bits to a word; 3-, 5- and 6-bit codes may straddle words). lucid holds the words as ``int32``
tensors (it has no uint32); their bit patterns are MLX's ``uint32`` words.

The codes, scales and biases are bit-identical on both streams and equal to
``mlx.core.quantize(w, group_size, bits)`` evaluated on MLX's CPU device
(docs/numerics.md, "Group-wise affine (MLX layout)"); MLX's own Metal kernel
rounds ties differently, which is why the GPU stream composes the steps itself.

>>> import lucid
>>> import lucid.quantization as Q
>>> w = lucid.arange(64.0).reshape(1, 64) / 64
>>> words, scales, biases = Q.group_quantize(w, group_size=32, bits=4)
>>> words.shape, scales.shape
((1, 8), (1, 2))
>>> float((Q.group_dequantize(words, scales, biases, 32, 4) - w).abs().max()) < scales.abs().max().item()
True
"""
from __future__ import annotations

from .. import _C

__all__ = ["group_quantize", "group_dequantize", "group_quantized_linear", "GROUP_SIZES", "GROUP_BITS"]

GROUP_SIZES = (32, 64, 128)  # what MLX's quantized_matmul takes
GROUP_BITS = (2, 3, 4, 5, 6, 8)  # MLX's affine widths (3, 5, 6 straddle words)


def group_quantize(w, group_size: int = 64, bits: int = 4):
    """``(words, scales, biases)`` of a finite float32 ``(N, K)`` weight; ``bits`` 2, 3, 4,
    5, 6 or 8; ``group_size`` (32, 64 or 128) must divide ``K``. ValueError / TypeError name the argument."""
    return _C.group_quantize(w, group_size, bits)


def group_dequantize(words, scales, biases, group_size: int = 64, bits: int = 4):
    """The ``(N, K)`` float32 weights the format holds: ``fl(fl(q * scale) + bias)``."""
    return _C.group_dequantize(words, scales, biases, group_size, bits)


def group_quantized_linear(x, words, scales, biases, group_size: int = 64, bits: int = 4, bias=None):
    """``x @ W.T (+ bias)`` with ``W`` in the format: MLX's ``quantized_matmul`` on the
    GPU stream, dequantized blocks and sgemm on the CPU stream (float results: the
    streams agree within float32 summation tolerance). Not differentiable."""
    return _C.group_quantized_linear(x, words, scales, biases, group_size, bits, bias)
