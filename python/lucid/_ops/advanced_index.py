"""Several index tensors in one expression (numpy's advanced indexing):
``x[i, j]``, ``x[i, :, j]``, ``x[mask, i]``, ``x[0, i, 1:]`` and the matching
writes, plus ``index_put`` / ``index_put_`` (``accumulate=True`` adds).

numpy's rules: the index tensors (ints next to them count too) broadcast to
one shape B; a boolean mask counts as its ``nonzero()`` tensors (read back to
the host). The result has B in place of the indexed axes when those indices
are adjacent in the expression, and B first otherwise. Built on basic
slicing, permute / reshape and index_select / index_copy / index_add over the
indexed axes flattened into one, so it is differentiable and runs on either
stream. indexing.getitem / setitem route here when an expression has more
than one tensor (or list / array) index.
"""
from __future__ import annotations

import builtins

import numpy as np

from .._C import ShapeError
from .. import _C
from .._creation import tensor
from .._tensor import Tensor
from . import indexing  # basic slicing and the gathers (indexing routes several-tensor indices here)
from .common import as_tensor, is_tensor

__all__ = ["index_put", "index_put_"]
TENSOR_METHODS = ["index_put", "index_put_"]


def count_tensor_indices(idx) -> int:
    """How many tensor / list / array entries an index expression holds."""
    items = idx if isinstance(idx, tuple) else (idx,)
    n = 0
    for it in items:
        if isinstance(it, (list, np.ndarray)):
            n += 1
        elif isinstance(it, Tensor) and not (it.ndim == 0 and not it.dtype.is_floating_point
                                              and it.dtype.name != "bool"):
            n += 1
    return n


def _parse(x, idx, fn):
    """-> (basic, advanced): ``basic`` indexes x with every advanced entry
    replaced by a full slice; ``advanced`` lists (output axis in x[basic],
    int64 index tensor) in expression order; plus whether they are adjacent."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    if builtins.sum(1 for it in items if it is Ellipsis) > 1:
        raise IndexError(f"{fn}(): an index can only have a single ellipsis ('...')")
    dev = x._device_name
    expanded = []  # (kind, value); a bool mask becomes one int tensor per axis it covers
    for it in items:
        if it is None or it is Ellipsis or isinstance(it, slice):
            expanded.append(("basic", it))
        elif indexing._is_int(it) or (isinstance(it, Tensor) and it.ndim == 0 and not it.dtype.is_floating_point
                             and it.dtype.name != "bool"):
            expanded.append(("int", builtins.int(it)))
        elif isinstance(it, (bool, np.bool_)):
            raise IndexError(f"{fn}(): a bool index is not supported; use a boolean tensor mask")
        elif is_tensor(it) or isinstance(it, (list, np.ndarray)):
            t = indexing._as_index_tensor(it, dev)
            if t.dtype.name == "bool":
                nz = np.argwhere(t.to("cpu").numpy().reshape(t.shape)).astype(np.int64)
                for k in range(t.ndim):
                    expanded.append(("mask", (tensor(np.ascontiguousarray(nz[:, k]), device=x.device), t.shape[k])))
            else:
                expanded.append(("tensor", t))
        else:
            raise IndexError(f"{fn}(): unsupported index type {type(it).__name__}")
    consumed = builtins.sum(1 for k, v in expanded if k != "basic" or isinstance(v, slice))
    if consumed > x.ndim:
        raise IndexError(f"{fn}(): too many indices for a tensor of dimension {x.ndim} ({consumed} given)")
    at = next((k for k, (kind, v) in enumerate(expanded) if v is Ellipsis), None)
    fill = [("basic", slice(None))] * (x.ndim - consumed)
    if at is None:
        expanded += fill
    else:
        expanded[at:at + 1] = fill
    basic, advanced, axis, out_axis, positions = [], [], 0, 0, []
    for k, (kind, v) in enumerate(expanded):
        if kind == "basic":
            basic.append(v)
            out_axis += 1
            axis += v is not None
            continue
        size = x.shape[axis]
        if kind == "mask":
            t, msize = v
            if msize != size:
                raise IndexError(f"{fn}(): boolean mask of size {msize} does not match dimension {axis} of size {size}")
        elif kind == "int":
            if not -size <= v < size:
                raise IndexError(f"{fn}(): index {v} is out of bounds for dimension {axis} with size {size}")
            t = tensor(v % size, device=x.device)
        else:
            t = _C.wrap_index(v._impl, size, axis, fn)
        basic.append(slice(None))
        advanced.append((out_axis, t))
        positions.append(k)
        out_axis += 1
        axis += 1
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    return tuple(basic), advanced, adjacent


def _broadcast(advanced, fn):
    shapes = [t.shape for _, t in advanced]
    try:
        b = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise IndexError(f"{fn}(): index tensors of shapes {shapes} cannot be broadcast together") from None
    return b


def _linear(region, advanced, b):
    """(permutation putting the indexed axes first, flat int64 index into them)."""
    axes = [a for a, _ in advanced]
    order = axes + [d for d in range(region.ndim) if d not in axes]
    lin = None
    stride = 1
    for a, t in reversed(advanced):
        term = t.expand(b) * stride if stride != 1 else t.expand(b)
        lin = term if lin is None else lin + term
        stride *= region.shape[a]
    return order, lin.reshape(-1), stride


def getitem(x, idx):
    basic, advanced, adjacent = _parse(x, idx, "getitem")
    region = indexing.getitem(x, basic)
    b = _broadcast(advanced, "getitem")
    order, lin, total = _linear(region, advanced, b)
    moved = region.permute(order) if order != list(range(region.ndim)) else region
    rest = list(moved.shape[len(advanced):])
    picked = indexing.index_select(moved.reshape([total] + rest), 0, lin).reshape(list(b) + rest)
    first = advanced[0][0]
    if adjacent and first:
        nb = len(b)
        perm = list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, picked.ndim))
        picked = picked.permute(perm)
    return picked


def _put(region, advanced, values, accumulate, fn, value_in_result_layout):
    """region with ``values`` stored (added) at the advanced positions."""
    b = _broadcast(advanced, fn)
    order, lin, total = _linear(region, advanced, b)
    moved = region.permute(order) if order != list(range(region.ndim)) else region
    rest = list(moved.shape[len(advanced):])
    nb = len(b)
    first = advanced[0][0]
    target = list(b) + rest
    if value_in_result_layout and first:  # the value has B where x[idx] puts it
        shown = rest[:first] + list(b) + rest[first:]
        perm_to_front = list(range(first, first + nb)) + list(range(first)) + list(range(first + nb, len(shown)))
    else:
        shown, perm_to_front = target, None
    v = as_tensor(values, region, "values")
    if v._device_name != region._device_name:
        v = v.to(region.device)
    if v.dtype != region.dtype:
        v = v.to(region.dtype)
    try:
        ok = tuple(np.broadcast_shapes(v.shape, tuple(shown))) == tuple(shown)
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"{fn}(): value of shape {v.shape} cannot be broadcast to the indexed shape {tuple(shown)}")
    v = v.expand(tuple(shown))
    if perm_to_front is not None:
        v = v.permute(perm_to_front)
    v = v.reshape([lin.shape[0]] + rest)
    flat = moved.reshape([total] + rest)
    flat = indexing.index_add(flat, 0, lin, v) if accumulate else indexing.index_copy(flat, 0, lin, v)
    out = flat.reshape(list(moved.shape))
    if order != list(range(region.ndim)):
        inverse = [order.index(d) for d in range(region.ndim)]
        out = out.permute(inverse)
    return out


def setitem(x, idx, value):
    """``x[idx] = value`` with several index tensors: the indexed region is
    rebuilt with index_copy and written back through a basic index."""
    basic, advanced, adjacent = _parse(x, idx, "setitem")
    region = indexing.getitem(x, basic)
    updated = _put(region, advanced, value, False, "setitem", value_in_result_layout=adjacent)
    return indexing.setitem(x, basic, updated)


def _index_put(fn, x, indices, values, accumulate):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a tensor, got {type(x).__name__}")
    if not isinstance(indices, (tuple, list)) or not all(isinstance(t, Tensor) for t in indices):
        raise TypeError(f"{fn}(): argument 'indices' must be a tuple of tensors")
    if not indices:
        raise ValueError(f"{fn}(): argument 'indices' must hold at least one tensor")
    _, advanced, _ = _parse(x, tuple(indices), fn)
    return _put(x, advanced, values, builtins.bool(accumulate), fn, value_in_result_layout=False)


def index_put(input, indices, values, accumulate=False):
    """Out-of-place :func:`index_put_`."""
    return _index_put("index_put", input, indices, values, accumulate)


def index_put_(input, indices, values, accumulate=False):
    """``input[indices] = values`` (``accumulate=True``: ``+=``, with repeated
    positions summed), in place; ``indices`` is a tuple of integer (or bool)
    tensors for the leading axes. Returns ``input``.

    >>> import lucid
    >>> x = lucid.zeros(3)
    >>> _ = x.index_put_((lucid.tensor([0, 0, 2]),), lucid.tensor([1.0, 2.0, 5.0]), accumulate=True)
    >>> x.tolist()
    [3.0, 0.0, 5.0]
    """
    updated = _index_put("index_put_", input, indices, values, accumulate)
    return indexing.setitem(input, Ellipsis, updated)
