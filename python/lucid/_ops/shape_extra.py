"""Shape ops composed over slices, index_select and expand (so they are
differentiable and run on either stream): repeat_interleave, meshgrid,
broadcast_tensors, diag, diagonal, unfold (Tensor.unfold's sliding windows)
and im2col (``nn.functional.unfold``). Unlike PyTorch, ``diagonal`` and
``unfold`` return copies, not views.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .common import wrap_dim

__all__ = ["repeat_interleave", "meshgrid", "broadcast_tensors", "broadcast_shapes", "diag", "diagonal", "unfold",
           "im2col"]
TENSOR_METHODS = ["repeat_interleave", "diag", "diagonal", "unfold"]


def _check(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


def _index(values, device):
    from .._creation import tensor

    return tensor(np.asarray(values, dtype=np.int64).reshape(-1), device=device)


def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    """Repeats each element ``repeats`` times along ``dim`` (flattened when
    None). ``repeats``: an int or a 1-d integer tensor with one count per
    element (read back to the host). Differentiable in ``input``.

    >>> import lucid
    >>> lucid.repeat_interleave(lucid.tensor([1, 2]), 2).tolist()
    [1, 1, 2, 2]
    """
    from .indexing import index_select

    _check("repeat_interleave", input)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, x.ndim, "repeat_interleave")
    if x.ndim == 0:
        x = x.reshape(1)
    n = x.shape[d]
    if isinstance(repeats, Tensor):
        if repeats.dtype.is_floating_point or repeats.dtype.name == "bool":  # counts, as PyTorch: integers only
            raise TypeError(f"repeat_interleave(): argument 'repeats' must be an integer tensor, got {repeats.dtype}")
        counts = repeats.detach().to("cpu").numpy().astype(np.int64).reshape(-1)
    elif isinstance(repeats, (int, np.integer)) and not isinstance(repeats, bool):
        counts = np.array([int(repeats)], dtype=np.int64)
    else:
        raise TypeError(f"repeat_interleave(): argument 'repeats' must be an int or a tensor, got "
                        f"{type(repeats).__name__}")
    if counts.size == 1:
        counts = np.full(n, counts[0], dtype=np.int64)
    if counts.size != n:
        raise ValueError(f"repeat_interleave(): argument 'repeats' must have one count per element ({n}), "
                         f"got {counts.size}")
    if (counts < 0).any():
        raise ValueError("repeat_interleave(): argument 'repeats' must be non-negative")
    return index_select(x, d, _index(np.repeat(np.arange(n), counts), x.device))


def broadcast_shapes(*shapes):
    """numpy's broadcast of the given shapes (a tuple)."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"broadcast_shapes(): shapes {list(shapes)} cannot be broadcast together") from None


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (a tuple); differentiable."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _check("broadcast_tensors", t, "tensors")
    try:
        shape = tuple(np.broadcast_shapes(*[t.shape for t in tensors]))
    except ValueError:
        raise ValueError(f"broadcast_tensors(): shapes {[t.shape for t in tensors]} cannot be broadcast "
                         "together") from None
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids from 1-d tensors: with ``indexing="ij"`` output k has
    shape ``(len(t0), len(t1), ...)`` and varies along axis k; ``"xy"``
    exchanges the first two axes of every output (numpy's default). Differentiable.

    >>> import lucid
    >>> a, b = lucid.meshgrid(lucid.tensor([1, 2]), lucid.tensor([3, 4, 5]), indexing="ij")
    >>> a.shape, b[0].tolist()
    ((2, 3), [3, 4, 5])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid(): argument 'indexing' must be 'ij' or 'xy', got {indexing!r}")
    for t in tensors:
        _check("meshgrid", t, "tensors")
        if t.ndim > 1:
            raise ValueError(f"meshgrid(): expected 0-d or 1-d tensors, got {t.ndim}-d")
    vecs = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(vecs) >= 2
    shape = tuple(v.shape[0] for v in vecs)
    out = []
    for k, v in enumerate(vecs):
        view = [1] * len(vecs)
        view[k] = shape[k]
        out.append(v.reshape(view).expand(shape))
    if swap:  # "xy" is the "ij" grid with its first two axes exchanged
        out = [o.transpose(0, 1) for o in out]
    return tuple(out)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the (dim1, dim2) planes, ``offset`` above (> 0) or below
    the main one, as a new last axis (a copy). Differentiable.

    >>> import lucid
    >>> lucid.diagonal(lucid.arange(9).reshape(3, 3), 1).tolist()
    [1, 5]
    """
    from .indexing import index_select

    _check("diagonal", input)
    d1 = wrap_dim(dim1, input.ndim, "diagonal", "dim1")
    d2 = wrap_dim(dim2, input.ndim, "diagonal", "dim2")
    if d1 == d2:
        raise ValueError(f"diagonal(): 'dim1' and 'dim2' must differ, both are {d1}")
    rest = [a for a in range(input.ndim) if a not in (d1, d2)]
    x = input.permute(rest + [d1, d2])
    n, m = input.shape[d1], input.shape[d2]
    rows = np.arange(max(0, -offset), min(n, m - offset)) if -n < offset < m else np.arange(0)
    flat = x.reshape([input.shape[a] for a in rest] + [n * m])
    return index_select(flat, flat.ndim - 1, _index(rows * m + rows + offset, input.device))


def diag(input, diagonal=0):  # noqa: A002
    """1-d input: a square matrix with ``input`` on diagonal ``diagonal``;
    2-d input: that diagonal as a 1-d tensor. Differentiable.

    >>> import lucid
    >>> lucid.diag(lucid.tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    """
    from .._creation import zeros
    from .indexing import index_add

    _check("diag", input)
    if input.ndim == 2:
        return globals()["diagonal"](input, diagonal)
    if input.ndim != 1:
        raise ValueError(f"diag(): argument 'input' must be 1-d or 2-d, got {input.ndim}-d")
    n = input.shape[0]
    size = n + abs(diagonal)
    i = np.arange(n)
    pos = (i + max(0, -diagonal)) * size + (i + max(0, diagonal))
    flat = zeros(size * size, dtype=input.dtype, device=input.device)
    return index_add(flat, 0, _index(pos, input.device), input).reshape(size, size)


def unfold(input, dimension, size, step):
    """Tensor.unfold: every window of ``size`` elements along ``dimension``,
    ``step`` apart; that axis becomes the window count and a new last axis of
    length ``size`` holds each window. Differentiable (a copy, not a view).

    >>> import lucid
    >>> lucid.arange(5).unfold(0, 2, 2).tolist()
    [[0, 1], [2, 3]]
    """
    from .indexing import index_select

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
    picked = index_select(x, d, _index(pos, x.device))
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
    from .shape import pad as _pad, stack

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
