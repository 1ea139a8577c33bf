"""Diagonals, composed from index_select / index_add, cat and pad (so they are
differentiable and run on either stream): diagonal and diag (read or build one
diagonal), diag_embed and diagflat (vectors onto diagonals), block_diag (matrices along
the diagonal of one matrix), trace. Unlike PyTorch, ``diagonal`` returns a copy, not a
view.
"""
from __future__ import annotations

import builtins
import functools

import numpy as np

from .._creation import zeros
from .._dtype import promote_types
from .._tensor import Tensor
from .common import index_tensor, wrap_dim
from .indexing import index_add, index_select
from .shape import cat, pad

__all__ = ["diagonal", "diag", "diag_embed", "diagflat", "block_diag", "trace"]
TENSOR_METHODS = ["diagonal", "diag", "diag_embed", "diagflat", "trace"]


def _check(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the (dim1, dim2) planes, ``offset`` above (> 0) or below
    the main one, as a new last axis (a copy). Differentiable.

    >>> import lucid
    >>> lucid.diagonal(lucid.arange(9).reshape(3, 3), 1).tolist()
    [1, 5]
    """
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
    return index_select(flat, flat.ndim - 1, index_tensor(rows * m + rows + offset, input.device))


def diag(input, diagonal=0):  # noqa: A002
    """1-d input: a square matrix with ``input`` on diagonal ``diagonal``;
    2-d input: that diagonal as a 1-d tensor. Differentiable.

    >>> import lucid
    >>> lucid.diag(lucid.tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    """
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
    return index_add(flat, 0, index_tensor(pos, input.device), input).reshape(size, size)


def _ndim(fn, x, n, argument):
    _check(fn, x, argument)
    if x.ndim != n:
        raise ValueError(f"{fn}(): argument '{argument}' must be a {n}-D tensor, got {x.ndim}-D")


def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integers sum to int64, as sum)."""
    _ndim("trace", input, 2, "input")
    return input.diagonal().sum()


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Each last-axis vector of ``input`` as the ``offset`` diagonal of a square matrix placed
    on output dims (dim1, dim2) (of the output's rank, input.ndim + 1)."""
    _check("diag_embed", input)
    nd = input.ndim + 1
    d1 = wrap_dim(dim1, nd, "diag_embed", "dim1")
    d2 = wrap_dim(dim2, nd, "diag_embed", "dim2")
    if d1 == d2:
        raise ValueError(f"diag_embed(): diagonal dimensions cannot be identical {dim1}, {dim2}")
    x = input.reshape(1) if input.ndim == 0 else input
    n = x.shape[-1]
    k = abs(builtins.int(offset))
    lead = tuple(x.shape[:-1])
    # x (…, n, 1) padded with n zeros per row: read n*n of the (…, n*(n+1)) values back as
    # (…, n, n) and x[i] lands at (i, i).
    z = x.unsqueeze(-1)
    z = cat([z, zeros(*lead, n, n, dtype=x.dtype, device=x.device)], -1) if n else z
    m = z.reshape(*lead, n * (n + 1))[..., : n * n].reshape(*lead, n, n)
    if k:
        # offset > 0: x[i] at (i, i + k): k zero columns on the left, k zero rows below.
        m = _pad(m, offset, k)
    rest = [i for i in range(nd) if i not in (d1, d2)]
    order = [0] * nd
    for src, dst in zip(list(range(nd - 2)) + [nd - 2, nd - 1], rest + [d1, d2]):
        order[dst] = src
    return m.permute(*order)


def _pad(m, offset, k):
    return pad(m, (k, 0, 0, k) if offset > 0 else (0, k, k, 0))


def diagflat(input, offset=0):
    """``input`` flattened onto the ``offset`` diagonal of a square 2-D matrix."""
    _check("diagflat", input)
    return diag(input.reshape(-1), offset)


def block_diag(*tensors):
    """The tensors (0-d, 1-d as one row, or 2-d) placed along the diagonal of one matrix, zeros
    elsewhere; the dtype is their promoted dtype."""
    mats = []
    for t in tensors:
        _check("block_diag", t, "tensors")
        if t.ndim > 2:
            raise ValueError(f"block_diag(): input tensors must have 2 or fewer dimensions, got {t.ndim}")
        mats.append(t.reshape(1, -1) if t.ndim == 1 else t.reshape(1, 1) if t.ndim == 0 else t)
    if not mats:
        return zeros(1, 0)
    dt = functools.reduce(promote_types, [m.dtype for m in mats])
    dev = mats[0].device
    total = builtins.sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        parts = []
        if left:
            parts.append(zeros(r, left, dtype=dt, device=dev))
        parts.append(m.to(dtype=dt) if m.dtype != dt else m)
        if total - left - c:
            parts.append(zeros(r, total - left - c, dtype=dt, device=dev))
        rows.append(cat(parts, 1) if len(parts) > 1 else parts[0])
        left += c
    return cat(rows, 0)
