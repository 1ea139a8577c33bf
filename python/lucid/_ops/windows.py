"""Sliding windows, composed from index_select, slices and stack (so they are
differentiable and run on either stream): ``unfold`` (Tensor.unfold: the windows along
one axis) and ``im2col`` (``nn.functional.unfold``: the (kh, kw) blocks of an image as
columns, also conv2d's recorded gradient). Both return copies, not views (unlike
PyTorch's Tensor.unfold).
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .common import index_tensor, wrap_dim
from .indexing import index_select
from .shape import pad as _pad, stack

__all__ = ["unfold", "im2col"]
TENSOR_METHODS = ["unfold"]


def _check(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


def unfold(input, dimension, size, step):
    """Tensor.unfold: every window of ``size`` elements along ``dimension``,
    ``step`` apart; that axis becomes the window count and a new last axis of
    length ``size`` holds each window. Differentiable (a copy, not a view).

    >>> import lucid
    >>> lucid.arange(5).unfold(0, 2, 2).tolist()
    [[0, 1], [2, 3]]
    """
    _check("unfold", input)
    x = input if input.ndim else input.reshape(1)
    d = wrap_dim(dimension, x.ndim, "unfold", "dimension")
    n = x.shape[d]
    if not isinstance(size, (int, np.integer)) or not 0 <= size <= n:
        raise ValueError(f"unfold(): argument 'size' must be in [0, {n}], got {size!r}")
    if not isinstance(step, (int, np.integer)) or step <= 0:
        raise ValueError(f"unfold(): argument 'step' must be a positive int, got {step!r}")
    count = (n - size) // step + 1
    pos = (np.arange(count)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    picked = index_select(x, d, index_tensor(pos, x.device))
    shape = list(x.shape)
    shape[d:d + 1] = [count, size]
    windows = picked.reshape(shape)
    order = [a for a in range(len(shape)) if a != d + 1] + [d + 1]
    return windows.permute(order)


def _pair(v, name):
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    if isinstance(v, (tuple, list)) and len(v) == 2:
        return int(v[0]), int(v[1])
    raise ValueError(f"unfold(): argument '{name}' must be an int or a pair, got {v!r}")


def im2col(input, kernel_size, dilation=1, padding=0, stride=1):
    """``nn.functional.unfold``: the sliding ``kernel_size`` blocks of a
    ``(N, C, H, W)`` (or ``(C, H, W)``) input as columns,
    ``(N, C * kh * kw, L)`` with ``L`` the number of block positions; the
    column index runs over (channel, kernel row, kernel column) as in
    PyTorch. Differentiable.
    """
    _check("unfold", input)
    batched = input.ndim == 4
    if input.ndim not in (3, 4):
        raise ValueError(f"unfold(): argument 'input' must be 3-d or 4-d (N, C, H, W), got {input.ndim}-d")
    x = input if batched else input.reshape((1,) + input.shape)
    kh, kw = _pair(kernel_size, "kernel_size")
    dh, dw = _pair(dilation, "dilation")
    ph, pw = _pair(padding, "padding")
    sh, sw = _pair(stride, "stride")
    if min(kh, kw, dh, dw, sh, sw) <= 0 or min(ph, pw) < 0:
        raise ValueError("unfold(): kernel_size, dilation and stride must be positive, padding non-negative")
    if ph or pw:
        x = _pad(x, (pw, pw, ph, ph))
    n, c, h, w = x.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (w - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(f"unfold(): the kernel ({kh}, {kw}) with dilation ({dh}, {dw}) does not fit the padded "
                         f"input of size ({h}, {w})")
    blocks = []
    for i in range(kh):
        for j in range(kw):
            blocks.append(x[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh, j * dw: j * dw + sw * (ow - 1) + 1: sw])
    cols = stack(blocks, 2).reshape(n, c * kh * kw, oh * ow)
    return cols if batched else cols.reshape(cols.shape[1:])
