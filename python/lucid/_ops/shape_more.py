"""More of PyTorch's shape functions, composed from reshape, cat, narrow,
flip, transpose and index ops (differentiable through them, either stream):
hstack / vstack / row_stack / dstack / column_stack, atleast_1d/2d/3d,
tensor_split / hsplit / vsplit / dsplit, ravel, swapdims, rot90, fliplr /
flipud, take, select_scatter, slice_scatter, diff, and the index builders
tril_indices / triu_indices / unravel_index, logspace, numel.
"""
from __future__ import annotations

import builtins

import numpy as np

from .._tensor import Tensor
from .common import wrap_dim

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack",
           "tensor_split", "hsplit", "vsplit", "dsplit", "ravel", "swapdims", "rot90", "fliplr", "flipud", "take",
           "select_scatter", "slice_scatter", "diff", "tril_indices", "triu_indices", "logspace", "unravel_index",
           "numel"]
TENSOR_METHODS = ["tensor_split", "hsplit", "vsplit", "dsplit", "ravel", "swapdims", "rot90", "fliplr", "flipud",
                  "take", "select_scatter", "slice_scatter", "diff"]


def _check(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _atleast(fn, n, tensors):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = []
    for t in tensors:
        _check(fn, t, "tensors")
        if t.ndim >= n:
            out.append(t)
        elif n == 3 and t.ndim == 1:
            out.append(t.reshape(1, -1, 1))
        elif n == 3 and t.ndim == 2:
            out.append(t.unsqueeze(-1))
        else:
            out.append(t.reshape(*((1,) * (n - t.ndim) + tuple(t.shape))))
    return out[0] if single else tuple(out)


def atleast_1d(*tensors):
    """The tensor (or each tensor) with at least 1 dimension; 0-d becomes (1,)."""
    return _atleast("atleast_1d", 1, tensors)


def atleast_2d(*tensors):
    """At least 2 dimensions: 0-d -> (1, 1), (n,) -> (1, n)."""
    return _atleast("atleast_2d", 2, tensors)


def atleast_3d(*tensors):
    """At least 3 dimensions: 0-d -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    return _atleast("atleast_3d", 3, tensors)


def _seq(fn, tensors):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' must be a sequence of tensors, got {type(tensors).__name__}")
    if not tensors:
        raise ValueError(f"{fn}(): expects a non-empty sequence of tensors")
    for t in tensors:
        _check(fn, t, "tensors")
    return list(tensors)


def hstack(tensors):
    """Concatenation along dim 1 (dim 0 when all are 1-D), after atleast_1d."""
    from .shape import cat

    ts = [atleast_1d(t) for t in _seq("hstack", tensors)]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """Concatenation along dim 0 after atleast_2d."""
    from .shape import cat

    return cat([atleast_2d(t) for t in _seq("vstack", tensors)], 0)


def row_stack(tensors):
    """Alias of :func:`vstack`."""
    return vstack(tensors)


def dstack(tensors):
    """Concatenation along dim 2 after atleast_3d."""
    from .shape import cat

    return cat([atleast_3d(t) for t in _seq("dstack", tensors)], 2)


def column_stack(tensors):
    """0-d and 1-d tensors as columns (n, 1), others as they are, concatenated along dim 1."""
    from .shape import cat

    return cat([t.reshape(-1, 1) if t.ndim <= 1 else t for t in _seq("column_stack", tensors)], 1)


def tensor_split(input, indices_or_sections, dim=0):
    """Splits along ``dim`` into views: an int n gives n parts, the first ``size % n`` one longer;
    a list (or 1-d int tensor) of indices splits before each (clamped to the size, so parts may
    be empty)."""
    _check("tensor_split", input)
    if input.ndim == 0:
        raise ValueError("tensor_split(): expected at least a 1-dimensional tensor")
    d = wrap_dim(dim, input.ndim, "tensor_split")
    size = input.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype.is_floating_point or ios.dtype.name == "bool" or ios.ndim > 1:
            raise TypeError("tensor_split(): argument 'indices_or_sections' as a tensor must be a 0-d or 1-d "
                            f"integer tensor, got {ios.dtype} with {ios.ndim} dims")
        ios = ios.item() if ios.ndim == 0 else [builtins.int(v) for v in ios.tolist()]
    if _is_int(ios):
        n = builtins.int(ios)
        if n <= 0:
            raise ValueError(f"tensor_split(): argument 'indices_or_sections' must be a positive number of "
                             f"sections, got {n}")
        q, r = divmod(size, n)
        bounds = np.cumsum([0] + [q + 1] * r + [q] * (n - r)).tolist()
    elif isinstance(ios, (list, tuple)) and builtins.all(_is_int(v) for v in ios):
        idx = [builtins.min(builtins.max(builtins.int(v) + (size if v < 0 else 0), 0), size) for v in ios]
        bounds = [0] + idx + [size]
    else:
        raise TypeError("tensor_split(): argument 'indices_or_sections' must be an int, a list of ints or an "
                        f"integer tensor, got {type(ios).__name__}")
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        a = builtins.min(a, size)
        out.append(input.narrow(d, a, builtins.max(b - a, 0)))
    return tuple(out)


def _split_dir(fn, input, sections, d):
    if _is_int(sections):
        if sections <= 0 or input.shape[d] % sections:
            raise ValueError(f"{fn}(): attempted to split along dimension {d}, but the size of the dimension "
                             f"{input.shape[d]} is not divisible by the split_size {sections}")
    return tensor_split(input, sections, d)


def hsplit(input, indices_or_sections):
    """tensor_split along dim 1 (dim 0 for 1-D); an int must divide the size."""
    _check("hsplit", input)
    if input.ndim == 0:
        raise ValueError("hsplit(): requires a tensor with at least 1 dimension, got 0")
    return _split_dir("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0)


def vsplit(input, indices_or_sections):
    """tensor_split along dim 0 of a tensor with at least 2 dims; an int must divide the size."""
    _check("vsplit", input)
    if input.ndim < 2:
        raise ValueError(f"vsplit(): requires a tensor with at least 2 dimensions, got {input.ndim}")
    return _split_dir("vsplit", input, indices_or_sections, 0)


def dsplit(input, indices_or_sections):
    """tensor_split along dim 2 of a tensor with at least 3 dims; an int must divide the size."""
    _check("dsplit", input)
    if input.ndim < 3:
        raise ValueError(f"dsplit(): requires a tensor with at least 3 dimensions, got {input.ndim}")
    return _split_dir("dsplit", input, indices_or_sections, 2)


def ravel(input):
    """The elements as a 1-D tensor (row-major)."""
    _check("ravel", input)
    return input.reshape(-1)


def swapdims(input, dim0, dim1):
    """Alias of transpose / swapaxes."""
    _check("swapdims", input)
    return input.transpose(dim0, dim1)


def rot90(input, k=1, dims=(0, 1)):
    """Rotates by 90 degrees ``k`` times in the plane ``dims``, from the first axis toward the
    second (numpy's and PyTorch's direction)."""
    _check("rot90", input)
    if not isinstance(dims, (list, tuple)) or len(dims) != 2:
        raise ValueError(f"rot90(): argument 'dims' must name 2 dimensions, got {dims!r}")
    if input.ndim < 2:
        raise ValueError(f"rot90(): expected a tensor with at least 2 dimensions, got {input.ndim}")
    d0 = wrap_dim(dims[0], input.ndim, "rot90", "dims")
    d1 = wrap_dim(dims[1], input.ndim, "rot90", "dims")
    if d0 == d1:
        raise ValueError(f"rot90(): argument 'dims' must name two different dimensions, got {dims!r}")
    if not _is_int(k):
        raise TypeError(f"rot90(): argument 'k' must be an int, got {type(k).__name__}")
    k = builtins.int(k) % 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0).flip(d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def fliplr(input):
    """Reverses dim 1 (at least 2-D)."""
    _check("fliplr", input)
    if input.ndim < 2:
        raise ValueError(f"fliplr(): input must be >= 2-d, got {input.ndim}-d")
    return input.flip(1)


def flipud(input):
    """Reverses dim 0 (at least 1-D)."""
    _check("flipud", input)
    if input.ndim < 1:
        raise ValueError("flipud(): input must be >= 1-d, got 0-d")
    return input.flip(0)


def _int_index(fn, index, argument="index"):
    if not isinstance(index, Tensor) or index.dtype.is_floating_point or index.dtype.name == "bool":
        raise TypeError(f"{fn}(): argument '{argument}' must be an integer tensor, got "
                        f"{index.dtype if isinstance(index, Tensor) else type(index).__name__}")


def take(input, index):
    """``input`` read as 1-D at ``index`` (any shape; negative counts from the end); the
    result has the index's shape."""
    from .indexing import index_select

    _check("take", input)
    _int_index("take", index)
    n = input.numel()
    flat_idx = index.reshape(-1).to(dtype="int64")
    if flat_idx.numel():
        lo, hi = builtins.int(flat_idx.min().item()), builtins.int(flat_idx.max().item())
        if lo < -n or hi >= n:
            raise IndexError(f"take(): argument 'index' out of range: {lo if lo < -n else hi} for an input of "
                             f"{n} elements")
        flat_idx = flat_idx + (flat_idx < 0).to(dtype="int64") * n
    return index_select(input.reshape(-1), 0, flat_idx).reshape(*index.shape)


def select_scatter(input, src, dim, index):
    """A copy of ``input`` whose slice ``select(dim, index)`` is ``src`` (of that slice's shape)."""
    _check("select_scatter", input)
    _check("select_scatter", src, "src")
    d = wrap_dim(dim, input.ndim, "select_scatter")
    n = input.shape[d]
    if not _is_int(index) or not -n <= index < n:
        raise IndexError(f"select_scatter(): argument 'index' {index!r} is out of range for dimension {d} of size "
                         f"{n}")
    want = tuple(input.shape[:d]) + tuple(input.shape[d + 1:])
    if tuple(src.shape) != want:
        raise ValueError(f"select_scatter(): argument 'src' must have shape {want}, got {tuple(src.shape)}")
    return _scatter_rows("select_scatter", input, src.unsqueeze(d), d, [builtins.int(index) % n])


def _scatter_rows(fn, input, src, d, rows):
    from .._creation import tensor
    from .indexing import index_copy

    if src.dtype != input.dtype:
        raise TypeError(f"{fn}(): argument 'src' must have input's dtype {input.dtype}, got {src.dtype}")
    if not rows:
        return input.clone()
    return index_copy(input, d, tensor(np.asarray(rows, dtype=np.int64), device=input.device), src)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` whose slice ``[start:end:step]`` along ``dim`` is ``src``."""
    _check("slice_scatter", input)
    _check("slice_scatter", src, "src")
    d = wrap_dim(dim, input.ndim, "slice_scatter")
    if not _is_int(step) or step <= 0:
        raise ValueError(f"slice_scatter(): argument 'step' must be a positive int, got {step!r}")
    rows = list(range(input.shape[d]))[slice(start, end, step)]
    want = tuple(input.shape[:d]) + (len(rows),) + tuple(input.shape[d + 1:])
    if tuple(src.shape) != want:
        raise ValueError(f"slice_scatter(): argument 'src' must have shape {want}, got {tuple(src.shape)}")
    return _scatter_rows("slice_scatter", input, src, d, rows)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """n-th forward difference along ``dim`` (``prepend`` / ``append`` concatenated first;
    logical xor for bool tensors)."""
    from .elementwise import logical_xor
    from .shape import cat

    _check("diff", input)
    if input.ndim == 0:
        raise ValueError("diff(): expected a tensor with at least 1 dimension, got 0")
    if not _is_int(n) or n < 0:
        raise ValueError(f"diff(): argument 'n' must be a non-negative int, got {n!r}")
    d = wrap_dim(dim, input.ndim, "diff")
    for name, t in (("prepend", prepend), ("append", append)):
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be a tensor, got {type(t).__name__}")
        if t.ndim != input.ndim:
            raise ValueError(f"diff(): argument '{name}' must have as many dimensions as input ({input.ndim}), "
                             f"got {t.ndim}")
    x = cat([t for t in (prepend, input, append) if t is not None], d) if (prepend is not None or
                                                                          append is not None) else input
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = logical_xor(hi, lo) if x.dtype.name == "bool" else hi - lo
    return x


def _tri_indices(fn, np_fn, row, col, offset, dtype, device):
    from .._creation import tensor

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
    from .._creation import tensor

    if not _is_int(steps) or steps < 0:
        raise ValueError(f"logspace(): argument 'steps' must be a non-negative int, got {steps!r}")
    vals = np.power(float(base), np.linspace(float(start), float(end), steps))
    from .._creation import get_default_dtype

    t = tensor(vals, dtype=dtype or get_default_dtype(), device=device)
    return t.requires_grad_() if requires_grad else t


def unravel_index(indices, shape):
    """Flat indices (an int or integer tensor) as a tuple of coordinate tensors for ``shape``
    (row-major); IndexError for an index outside ``[-numel, numel)``."""
    from .._creation import tensor

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


def numel(input):
    """The number of elements (an int)."""
    _check("numel", input)
    return input.numel()
