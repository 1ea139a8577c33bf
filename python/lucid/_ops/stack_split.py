"""numpy's stacking and splitting, composed from cat, reshape and narrow (so they are
differentiable and run on either stream): atleast_1d / atleast_2d / atleast_3d (the
rank the stackers promote to), hstack / vstack / row_stack / dstack / column_stack,
tensor_split / hsplit / vsplit / dsplit.
"""
from __future__ import annotations

import builtins

import numpy as np

from .._tensor import Tensor
from .common import wrap_dim
from .shape import cat

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack",
           "tensor_split", "hsplit", "vsplit", "dsplit"]
TENSOR_METHODS = ["tensor_split", "hsplit", "vsplit", "dsplit"]


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
    ts = [atleast_1d(t) for t in _seq("hstack", tensors)]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """Concatenation along dim 0 after atleast_2d."""
    return cat([atleast_2d(t) for t in _seq("vstack", tensors)], 0)


def row_stack(tensors):
    """Alias of :func:`vstack`."""
    return vstack(tensors)


def dstack(tensors):
    """Concatenation along dim 2 after atleast_3d."""
    return cat([atleast_3d(t) for t in _seq("dstack", tensors)], 2)


def column_stack(tensors):
    """0-d and 1-d tensors as columns (n, 1), others as they are, concatenated along dim 1."""
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
