"""Creation ops composed over lucid._creation and the op families: logspace, the index
builders tril_indices / triu_indices / unravel_index, the grids meshgrid /
cartesian_prod / combinations, and vander.
"""
from __future__ import annotations

import builtins
import itertools

import numpy as np

from .._creation import full_like, get_default_dtype, tensor
from .._tensor import Tensor
from .indexing import index_select
from .scan import cumprod
from .shape import cat, stack

__all__ = ["logspace", "tril_indices", "triu_indices", "unravel_index", "meshgrid", "cartesian_prod", "combinations",
           "vander"]
TENSOR_METHODS: list = []


def _check(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _int_index(fn, index, argument="index"):
    if not isinstance(index, Tensor) or index.dtype.is_floating_point or index.dtype.name == "bool":
        raise TypeError(f"{fn}(): argument '{argument}' must be an integer tensor, got "
                        f"{index.dtype if isinstance(index, Tensor) else type(index).__name__}")


def _tri_indices(fn, np_fn, row, col, offset, dtype, device):
    for name, v in (("row", row), ("col", col), ("offset", offset)):
        if not _is_int(v):
            raise TypeError(f"{fn}(): argument '{name}' must be an int, got {type(v).__name__}")
    if row < 0 or col < 0:
        raise ValueError(f"{fn}(): argument 'row' and 'col' must be non-negative, got {row} and {col}")
    r, c = np_fn(row, offset, col)
    return tensor(np.stack([r, c]).astype(np.int64).reshape(2, -1), dtype=dtype or "int64", device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    """Coordinates (2, N) of the lower triangle of a row x col matrix (below ``offset``'s diagonal
    included), row-major order."""
    return _tri_indices("tril_indices", np.tril_indices, row, col, offset, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    """Coordinates (2, N) of the upper triangle (from ``offset``'s diagonal), row-major order."""
    return _tri_indices("triu_indices", np.triu_indices, row, col, offset, dtype, device)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``base ** linspace(start, end, steps)`` (computed in float64, then cast to ``dtype``, by
    default the default dtype)."""
    if not _is_int(steps) or steps < 0:
        raise ValueError(f"logspace(): argument 'steps' must be a non-negative int, got {steps!r}")
    vals = np.power(float(base), np.linspace(float(start), float(end), steps))
    t = tensor(vals, dtype=dtype or get_default_dtype(), device=device)
    return t.requires_grad_() if requires_grad else t


def unravel_index(indices, shape):
    """Flat indices (an int or integer tensor) as a tuple of coordinate tensors for ``shape``
    (row-major); IndexError for an index outside ``[-numel, numel)``."""
    if isinstance(indices, Tensor):
        _int_index("unravel_index", indices, "indices")
        idx = indices.to(dtype="int64")
    elif _is_int(indices):
        idx = tensor(builtins.int(indices), dtype="int64")
    else:
        raise TypeError(f"unravel_index(): argument 'indices' must be an int or an integer tensor, got "
                        f"{type(indices).__name__}")
    if _is_int(shape):
        shape = (shape,)
    shape = tuple(shape)
    if not builtins.all(_is_int(s) and s >= 0 for s in shape):
        raise ValueError(f"unravel_index(): argument 'shape' must be non-negative ints, got {shape}")
    n = builtins.int(np.prod(shape, dtype=np.int64))
    if idx.numel():
        lo, hi = builtins.int(idx.min().item()), builtins.int(idx.max().item())
        if lo < -n or hi >= n:
            raise IndexError(f"unravel_index(): argument 'indices' out of range for shape {shape}: "
                             f"{lo if lo < -n else hi}")
        idx = idx + (idx < 0).to(dtype="int64") * n
    out = []
    for s in reversed(shape):
        out.append(idx.remainder(s))
        idx = idx.floor_divide(s)
    return tuple(reversed(out))


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


def vander(x, N=None, increasing=False):
    """Vandermonde matrix of a 1-D ``x``: columns x^(N-1) … x^0 (x^0 … x^(N-1) with
    ``increasing``), N = len(x) by default; built as a running product (exact for integers)."""
    _check("vander", x, "x")
    if x.ndim != 1:
        raise ValueError(f"vander(): argument 'x' must be a 1-D tensor, got {x.ndim}-D")
    n = x.shape[0] if N is None else N
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ValueError(f"vander(): argument 'N' must be a non-negative int, got {N!r}")
    if x.dtype.name == "bool":
        x = x.to(dtype="int64")
    col = x.reshape(-1, 1)
    if n == 0:
        return col[:, :0]
    ones = full_like(col, 1)
    out = ones if n == 1 else cumprod(cat([ones] + [col] * (n - 1), 1), 1)
    return out if increasing else out.flip(1)


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, rows in lexicographic order
    (N, k); one tensor is returned as it is."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _check("cartesian_prod", t, "tensors")
        if t.ndim != 1:
            raise ValueError(f"cartesian_prod(): expected 1-D tensors, got {t.ndim}-D")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-D tensor's elements (itertools' order) as rows
    (count, r); ``with_replacement`` allows repeats. r == 0 gives an empty 1-D tensor."""
    _check("combinations", input)
    if input.ndim != 1:
        raise ValueError(f"combinations(): expected a 1-D tensor, got {input.ndim}-D")
    if not isinstance(r, (int, np.integer)) or isinstance(r, bool) or r < 0:
        raise ValueError(f"combinations(): argument 'r' must be a non-negative int, got {r!r}")
    if r == 0:
        return input[:0]
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    cols = [index_select(input, 0, tensor(idx[:, j].copy(), device=input.device)) for j in range(r)]
    return stack(cols, 1)
