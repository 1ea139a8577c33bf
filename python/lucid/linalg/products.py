"""torch.linalg's spellings of the core products and views: multi_dot (a matrix chain
in its cheapest association order), vecdot, cross (along the last axis by default, unlike
``lucid.cross``) and diagonal (of the last two axes by default).
"""
from __future__ import annotations

import math

from .._C import ShapeError
from .._ops import shape
from .._ops.diagonals import diagonal
from .._ops.linalg import cross as _cross
from .._ops.linalg import matmul
from .decomposition import _tensor

__all__: list = []  # torch.linalg names only (lucid.linalg)
TENSOR_METHODS: list = []


def multi_dot(tensors):
    """The product of a list of matrices in the cheapest association order; the
    first may be 1-D (a row vector), the last 1-D (a column vector), the others 2-D.

    >>> import lucid
    >>> a = lucid.ones(2, 3)
    >>> lucid.linalg.multi_dot([lucid.ones(3), a.T, a, lucid.ones(3)]).item()
    18.0
    """
    fn = "linalg.multi_dot"
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}: argument 'tensors' must be a list or tuple of tensors, got {type(tensors).__name__}")
    if len(tensors) < 2:
        raise ValueError(f"{fn}: expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        _tensor(fn, t, f"tensors[{i}]")
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            raise ValueError(f"{fn}: tensor {i} must be {' or '.join(f'{d}D' for d in allowed)} but got {t.ndim}D")
    mats = list(tensors)
    first_vec, last_vec = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_vec:
        mats[0] = shape.unsqueeze(mats[0], 0)
    if last_vec:
        mats[-1] = shape.unsqueeze(mats[-1], -1)
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ValueError(f"{fn}: tensors[{i}] and tensors[{i + 1}] cannot be multiplied "
                             f"({tuple(mats[i].shape)} and {tuple(mats[i + 1].shape)})")
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    k = len(mats)
    # Matrix-chain order: cost[i][j] is the fewest scalar products for mats[i..j].
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def product(i, j):
        if i == j:
            return mats[i]
        s = split[i][j]
        return matmul(product(i, s), product(s + 1, j))

    out = product(0, k - 1)
    if first_vec:
        out = shape.squeeze(out, 0)
    if last_vec:
        out = shape.squeeze(out, -1)
    return out


def vecdot(x, y, *, dim=-1):
    """Dot products of the vectors along ``dim`` (operands broadcast): ``(x * y).sum(dim)``.

    >>> import lucid
    >>> lucid.linalg.vecdot(lucid.tensor([[1.0, 2.0], [3.0, 4.0]]), lucid.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    _tensor("linalg.vecdot", x, "x")
    _tensor("linalg.vecdot", y, "y")
    return (x * y).sum(dim)


def cross(input, other, *, dim=-1):
    """Cross products of 3-vectors along ``dim`` (default the last axis, unlike
    ``lucid.cross``); operands of one rank, broadcast.

    >>> import lucid
    >>> lucid.linalg.cross(lucid.tensor([1.0, 0.0, 0.0]), lucid.tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    _tensor("linalg.cross", input, "input")
    _tensor("linalg.cross", other, "other")
    if input.ndim != other.ndim:
        raise ShapeError("linalg.cross: inputs must have the same number of dimensions.")
    return _cross(input, other, dim=dim)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``torch.linalg.diagonal``: ``lucid.diagonal`` with the last two axes as default."""
    return diagonal(A, offset, dim1, dim2)
