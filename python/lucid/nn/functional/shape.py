"""Padding and rearranging in ``lucid.nn.functional``: pad, flatten, the pixel and
channel shuffles, and unfold / fold (sliding blocks to columns and back),
composed from lucid ops (both streams, differentiable)."""
from __future__ import annotations

import numbers

import numpy as np

import lucid._namespace as lucid

from ..._ops.nn import _pair


def pad(input, pad, mode="constant", value=None):
    """PyTorch's ``F.pad``: ``pad = (left, right, top, bottom, ...)`` from the last axis;
    modes ``constant`` / ``reflect`` / ``replicate`` / ``circular`` (see ``lucid.pad``)."""
    return lucid.pad(input, pad, mode=mode, value=0 if value is None else value)


def flatten(input, start_dim=1, end_dim=-1):
    """Merges axes ``start_dim..end_dim`` into one (the layer's default keeps the batch axis)."""
    return lucid.flatten(input, start_dim, end_dim)


def _factor(v, fn, arg):
    if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
        raise ValueError(f"{fn}(): argument '{arg}' must be a positive int, got {v!r}")
    return int(v)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): channel ``c r^2 + i r + j`` moves to pixel
    offset (i, j) of channel c, as PyTorch.

    >>> import lucid
    >>> lucid.nn.functional.pixel_shuffle(lucid.arange(4.0).reshape(1, 4, 1, 1), 2).tolist()
    [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    fn = "pixel_shuffle"
    r = _factor(upscale_factor, fn, "upscale_factor")
    if input.ndim < 3 or input.shape[-3] % (r * r):
        raise ValueError(f"{fn}(): expected (*, C * {r * r}, H, W), got shape {tuple(input.shape)}")
    *lead, c, h, w = input.shape
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)  # (*, C, H, r, W, r)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """The inverse of :func:`pixel_shuffle`: (*, C, H r, W r) -> (*, C r^2, H, W)."""
    fn = "pixel_unshuffle"
    r = _factor(downscale_factor, fn, "downscale_factor")
    if input.ndim < 3 or input.shape[-2] % r or input.shape[-1] % r:
        raise ValueError(f"{fn}(): expected (*, C, H, W) with H and W divisible by {r}, got shape "
                         f"{tuple(input.shape)}")
    *lead, c, h, w = input.shape
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)  # (*, C, r, r, H, W)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """(N, C, *) with C = g k -> channels reordered as (k, g): channel ``j g + i`` takes
    channel ``i k + j`` (ShuffleNet's shuffle, PyTorch's)."""
    fn = "channel_shuffle"
    g = _factor(groups, fn, "groups")
    if input.ndim < 3 or input.shape[1] % g:
        raise ValueError(f"{fn}(): expected (N, C, *) with C divisible by groups={g}, got shape "
                         f"{tuple(input.shape)}")
    n, c, *rest = input.shape
    return input.reshape(n, g, c // g, *rest).transpose(1, 2).reshape(n, c, *rest)


def _patch_kernel(c, kh, kw, like):
    """(C*kh*kw, 1, kh, kw) one-hot kernels: output channel c*kh*kw + i*kw + j reads
    position (i, j) of channel c (grouped by channel), PyTorch's unfold order."""
    eye = np.eye(kh * kw, dtype=np.float32).reshape(kh * kw, 1, kh, kw)
    return lucid.tensor(np.tile(eye, (c, 1, 1, 1)), device=like.device).to(dtype=like.dtype)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks (im2col): (N, C, H, W) -> (N, C * kh * kw, L), L the number
    of block positions; one implementation, ``lucid.im2col``.

    >>> import lucid
    >>> lucid.nn.functional.unfold(lucid.arange(9.0).reshape(1, 1, 3, 3), 2).tolist()[0][0]
    [0.0, 1.0, 3.0, 4.0]
    """
    if input.ndim != 4:
        raise ValueError(f"unfold(): expected a 4-D input (N, C, H, W), got shape {tuple(input.shape)}")
    return lucid.im2col(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold (col2im): (N, C * kh * kw, L) -> (N, C, H, W), overlapping
    values summed; a transposed convolution with unfold's one-hot kernels.

    >>> import lucid
    >>> x = lucid.ones(1, 1, 3, 3)
    >>> lucid.nn.functional.fold(lucid.nn.functional.unfold(x, 2), (3, 3), 2).tolist()[0][0]
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    fn = "fold"
    if input.ndim != 3:
        raise ValueError(f"{fn}(): expected a 3-D input (N, C * kh * kw, L), got shape {tuple(input.shape)}")
    kh, kw = _pair(kernel_size, fn, "kernel_size")
    oh, ow = _pair(output_size, fn, "output_size")
    sh, sw = _pair(stride, fn, "stride")
    ph, pw = _pair(padding, fn, "padding")
    dh, dw = _pair(dilation, fn, "dilation")
    if input.shape[1] % (kh * kw):
        raise ValueError(f"{fn}(): input.shape[1] ({input.shape[1]}) must be divisible by kh * kw ({kh * kw})")
    c = input.shape[1] // (kh * kw)
    bh = (oh + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    bw = (ow + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if bh <= 0 or bw <= 0 or bh * bw != input.shape[2]:
        raise ValueError(f"{fn}(): expected {max(bh, 0) * max(bw, 0)} blocks for output_size {(oh, ow)}, got "
                         f"{input.shape[2]}")
    cols = input.reshape(input.shape[0], input.shape[1], bh, bw)
    # rows and columns past the last block (fewer than a stride) come back through output_padding
    extra = (oh - ((bh - 1) * sh - 2 * ph + dh * (kh - 1) + 1), ow - ((bw - 1) * sw - 2 * pw + dw * (kw - 1) + 1))
    return lucid.conv_transpose2d(cols, _patch_kernel(c, kh, kw, input), None, (sh, sw), (ph, pw), extra, c,
                                  (dh, dw))


__all__ = ["pad", "flatten", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "unfold", "fold"]
