"""1-D pooling, pixel and channel shuffles, and the shrink / threshold activations
of ``lucid.nn.functional``, composed from lucid ops (both streams, differentiable).

The 1-D pools are the 2-D ones over a unit height, as conv1d is conv2d's: an
(N, C, L) input is viewed as (N, C, 1, L) and the window is (1, k).
"""
from __future__ import annotations

import numbers

import lucid

from .._ops.nn import _pair, adaptive_avg_pool2d, avg_pool2d, max_pool2d
from ._f_resample import adaptive_max_pool2d, dropout2d

__all__ = ["max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "pixel_shuffle",
           "pixel_unshuffle", "channel_shuffle", "softmin", "threshold", "hardshrink", "softshrink", "tanhshrink",
           "dropout1d", "dropout3d"]


def _one(v, fn, arg):
    """An int or a 1-tuple -> int (PyTorch's 1-D window arguments)."""
    return _pair(v, fn, arg, 1)[0]


def _as_2d(input, fn):
    if input.ndim not in (2, 3):
        raise ValueError(f"{fn}(): expected a 2-D (unbatched) or 3-D input (N, C, L), got shape {tuple(input.shape)}")
    return input.unsqueeze(-2)  # (…, C, 1, L)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over windows of ``kernel_size`` along L of an (N, C, L) or (C, L) input;
    with ``return_indices`` also the position of each maximum along L.

    >>> import lucid
    >>> lucid.nn.functional.max_pool1d(lucid.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[3.0, 2.0]]]
    """
    fn = "max_pool1d"
    k = _one(kernel_size, fn, "kernel_size")
    s = k if stride is None else _one(stride, fn, "stride")
    out = max_pool2d(_as_2d(input, fn), (1, k), (1, s), (0, _one(padding, fn, "padding")),
                     (1, _one(dilation, fn, "dilation")), ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over windows along L of an (N, C, L) or (C, L) input.

    >>> import lucid
    >>> lucid.nn.functional.avg_pool1d(lucid.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[2.0, 1.0]]]
    """
    fn = "avg_pool1d"
    k = _one(kernel_size, fn, "kernel_size")
    s = k if stride is None else _one(stride, fn, "stride")
    return avg_pool2d(_as_2d(input, fn), (1, k), (1, s), (0, _one(padding, fn, "padding")), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    """Mean over ``output_size`` adaptive bins along L (bin i covers
    ``floor(i L / out) .. ceil((i + 1) L / out) - 1``)."""
    fn = "adaptive_avg_pool1d"
    return adaptive_avg_pool2d(_as_2d(input, fn), (1, _one(output_size, fn, "output_size"))).squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max over ``output_size`` adaptive bins along L."""
    fn = "adaptive_max_pool1d"
    out = adaptive_max_pool2d(_as_2d(input, fn), (1, _one(output_size, fn, "output_size")), return_indices)
    if return_indices:  # a unit height: the flat h*W + w index is the position along L
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


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


def softmin(input, dim=None, dtype=None):
    """``softmax(-input)`` along ``dim``."""
    from .functional import softmax

    return softmax(-input, dim, dtype=dtype) if dtype is not None else softmax(-input, dim)


def threshold(input, threshold, value, inplace=False):  # noqa: A002 (PyTorch's argument name)
    """``input`` where ``input > threshold``, else ``value``."""
    out = lucid.where(input > threshold, input, lucid.full((), float(value), dtype=input.dtype, device=input.device))
    return input.copy_(out) if inplace else out


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    return lucid.where(lucid.abs(input) > lambd, input, lucid.zeros_like(input))


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    if lambd < 0:
        raise ValueError(f"softshrink(): argument 'lambd' must be non-negative, got {lambd}")
    zero = lucid.zeros_like(input)
    return lucid.where(input > lambd, input - lambd, lucid.where(input < -lambd, input + lambd, zero))


def tanhshrink(input):
    """``x - tanh(x)``."""
    return input - lucid.tanh(input)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of an (N, C, L) or (C, L) input with probability ``p`` (the rest
    scaled by ``1 / (1 - p)``) when ``training``."""
    if input.ndim not in (2, 3):
        raise ValueError(f"dropout1d(): expected a 2-D or 3-D input, got shape {tuple(input.shape)}")
    return dropout2d(input.unsqueeze(-1), p, training).squeeze(-1)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of an (N, C, D, H, W) or (C, D, H, W) input with probability ``p``."""
    if input.ndim not in (4, 5):
        raise ValueError(f"dropout3d(): expected a 4-D or 5-D input, got shape {tuple(input.shape)}")
    shape = tuple(input.shape)
    return dropout2d(input.reshape(*shape[:-2], shape[-2] * shape[-1]), p, training).reshape(shape)
