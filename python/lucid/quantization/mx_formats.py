"""MLX's block quantization formats, bit-identical on both streams:
``mlx.core.quantize(w, group_size, bits, mode)`` for ``mode`` "affine" (bits 2,
3, 4, 5, 6, 8; group 32, 64, 128; float32 scales and biases), "mxfp8" (E4M3
elements), "mxfp4" (E2M1 elements; both with E8M0 scales over groups of 32)
and "nvfp4" (E2M1 elements, E4M3 scales over groups of 16).

Layout (MLX's): each row's codes form one bit stream, code k at bits
``[k * bits, (k + 1) * bits)``, 32 bits to a word; lucid holds the words as int32
tensors whose bit patterns are MLX's uint32 words, scales of the MX / NVFP4
modes as uint8 codes. docs/numerics.md, "Block formats (MLX layout)", gives
every rounding decision and the few cases where lucid follows OCP MX v1.0
because MLX's CPU and Metal backends disagree.

>>> import lucid
>>> import lucid.quantization as Q
>>> w = lucid.tensor([[0.5, -1.0, 3.0, 6.0] * 8])
>>> words, scales = Q.quantize_mx(w, "mxfp4")
>>> words.shape, scales.tolist()
((1, 4), [[127]])
>>> Q.dequantize_mx(words, scales, mode="mxfp4").tolist()[0][:4]
[0.5, -1.0, 3.0, 6.0]
"""
from __future__ import annotations

import numpy as np

from .. import _C
from .._creation import tensor as _tensor
from .._tensor import Tensor

__all__ = ["quantize_mx", "dequantize_mx", "block_weight_linear", "MX_MODES", "mx_format", "save_mlx", "load_mlx"]

MX_MODES = ("affine", "mxfp8", "mxfp4", "nvfp4")
_FIXED = {"mxfp8": (32, 8), "mxfp4": (32, 4), "nvfp4": (16, 4)}


def mx_format(mode, group_size=None, bits=None, fn="quantize_mx"):
    """``(group_size, bits)`` of ``mode`` with MLX's defaults (affine: 64, 4); ValueError
    for a mode, group size or width MLX does not have."""
    if mode not in MX_MODES:
        raise ValueError(f"{fn}(): argument 'mode' must be one of {MX_MODES}, got {mode!r}")
    for name, v in (("group_size", group_size), ("bits", bits)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise TypeError(f"{fn}(): argument '{name}' must be an int or None, got {type(v).__name__}")
    if mode == "affine":
        g = 64 if group_size is None else group_size
        b = 4 if bits is None else bits
        if g not in (32, 64, 128):
            raise ValueError(f"{fn}(): argument 'group_size' must be 32, 64 or 128 for 'affine', got {g}")
        if b not in (2, 3, 4, 5, 6, 8):
            raise ValueError(f"{fn}(): argument 'bits' must be 2, 3, 4, 5, 6 or 8 for 'affine', got {b}")
        return g, b
    g, b = _FIXED[mode]
    if group_size not in (None, g):
        raise ValueError(f"{fn}(): '{mode}' has group_size {g}, got {group_size}")
    if bits not in (None, b):
        raise ValueError(f"{fn}(): '{mode}' has bits {b}, got {bits}")
    return g, b


def _as_rows(x, fn, argument):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a lucid.Tensor, got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"{fn}(): argument '{argument}' must have at least 2 dimensions, got shape {tuple(x.shape)}")
    return x.reshape(-1, x.shape[-1])


def quantize_mx(x, mode="affine", group_size=None, bits=None):
    """``mlx.core.quantize(x, group_size, bits, mode)``: ``(words, scales, biases)`` for
    "affine", ``(words, scales)`` otherwise, with ``x``'s leading dimensions.

    ``x`` is float32 with at least 2 dimensions, its last a multiple of the group
    size (of 32 for the MX / NVFP4 modes). "affine" needs finite values; the other
    modes take any (a group holding NaN or inf gets the NaN scale 0xFF in the MX
    modes). TypeError / ValueError name the argument.
    """
    fn = "quantize_mx"
    g, b = mx_format(mode, group_size, bits, fn)
    rows = _as_rows(x, fn, "x")
    lead = tuple(x.shape[:-1])
    if mode == "affine":
        out = _C.group_quantize(rows, g, b)
    else:
        out = _C.block_quantize(rows, mode)
    return tuple(t.reshape(*lead, t.shape[-1]) for t in out)


def dequantize_mx(words, scales, biases=None, group_size=None, bits=None, mode="affine"):
    """``mlx.core.dequantize``: the float32 values the format holds, shape
    ``(..., K)``. "affine": ``fl(fl(q * scale) + bias)``; "mxfp8" / "mxfp4":
    ``decode(q) * 2^(scale - 127)`` (scale 0xFF: NaN); "nvfp4": ``decode(q) *
    decode_e4m3(scale)``."""
    fn = "dequantize_mx"
    g, b = mx_format(mode, group_size, bits, fn)
    w2 = _as_rows(words, fn, "words")
    s2 = _as_rows(scales, fn, "scales")
    lead = tuple(words.shape[:-1])
    if mode == "affine":
        if biases is None:
            raise ValueError(f"{fn}(): 'affine' needs 'biases'")
        y = _C.group_dequantize(w2, s2, _as_rows(biases, fn, "biases"), g, b)
    else:
        if biases is not None:
            raise ValueError(f"{fn}(): '{mode}' has no biases, got a tensor")
        y = _C.block_dequantize(w2, s2, mode)
    return y.reshape(*lead, y.shape[-1])


def block_weight_linear(x, words, scales, mode, bias=None):
    """``x @ W.T (+ bias)`` with ``W = dequantize_mx(words, scales, mode=mode)`` for
    ``mode`` "mxfp8", "mxfp4" or "nvfp4": float32 ``x`` (..., K), words (N, K * bits /
    32), scale codes (N, K / group). With at most 8 rows of ``x`` the CPU stream reads
    the codes in place (the decoding case); otherwise, and on the GPU stream, the
    weights are dequantized and multiplied. Float output, within float32 summation
    tolerance of the exact product (docs/numerics.md). Not differentiable."""
    return _C.block_weight_linear(x, words, scales, mode, bias)


def _is_words(name, value):
    return value.dtype.name == "int32" and (name == "weight" or name.endswith(".weight"))


def save_mlx(state, path):
    """Writes a state dict (``module.state_dict()``) as a safetensors file in MLX's
    conventions: int32 ``weight`` entries (the packed words of the quantized layers)
    as uint32, every other tensor as its dtype. ``mlx.nn.QuantizedLinear`` (and
    ``mlx.core.load``) read it. bfloat16 tensors are refused (cast first)."""
    from safetensors.numpy import save_file  # deferred: an optional dependency, as in lucid.serialization
    out = {}
    for name, value in state.items():
        if value is None:
            continue
        if not isinstance(value, Tensor):
            raise TypeError(f"save_mlx(): entry {name!r} must be a lucid.Tensor, got {type(value).__name__}")
        if value.dtype.name == "bfloat16":
            raise TypeError(f"save_mlx(): entry {name!r} is bfloat16; cast it to float32 or float16 first")
        a = np.ascontiguousarray(value.to("cpu").numpy())
        out[name] = a.view(np.uint32) if _is_words(name, value) else a
    save_file(out, str(path))


def load_mlx(path, device=None):
    """A state dict from an MLX safetensors file: uint32 entries become int32 tensors of
    the same bits (lucid's form of the packed words), others keep their dtype."""
    from safetensors.numpy import load_file  # deferred: an optional dependency
    state = {}
    for name, a in load_file(str(path)).items():
        if a.dtype == np.uint32:
            a = a.view(np.int32)
        state[name] = _tensor(a, device=device)
    return state
