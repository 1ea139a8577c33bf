"""Sorting, searching and counting (csrc/ops/sort.cpp): sort, argsort, topk, median,
unique, count_nonzero, bincount, nonzero, masked_select; composed from those and
comparisons: unique_consecutive, searchsorted / bucketize, isin.

``sort`` is one C++ kernel per stream, stable in both directions (equal keys
keep increasing input position, so ``topk`` breaks ties by the lower index,
as PyTorch's CPU kernel does) with NaN above every number; both streams give
identical values and indices. The rest compose over it. Ops whose output
size depends on the data (unique, nonzero, masked_select, bincount) read a
small tensor back to the host once, as PyTorch does on an accelerator.
"""
from __future__ import annotations

import builtins

import numpy as np

from .._C import ShapeError
from .. import _C
from .._creation import full, tensor
from .._tensor import Tensor
from ..autograd import Function
from ..autograd.grad_mode import is_grad_enabled
from .common import constant, host_array, returns_values_indices, wrap, wrap_dim
from .indexing import gather, scatter_add
from .reduction import sum as _sum
from .shape import broadcast_to, movedim

__all__ = ["sort", "argsort", "msort", "topk", "median", "unique", "count_nonzero", "bincount", "nonzero",
           "masked_select"]
TENSOR_METHODS = ["sort", "argsort", "msort", "topk", "median", "unique", "count_nonzero", "bincount", "nonzero",
                  "masked_select"]


def _check(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


class _Select(Function):
    """values = x gathered at ``indices`` along ``dim`` (sort, topk, median):
    the gradient is scattered back to those positions."""

    @classmethod
    def node_name(cls, ctx):  # SortBackward, TopkBackward, MedianBackward
        return ctx.name.capitalize() + "Backward"

    @staticmethod
    def forward(ctx, x, indices, dim, name):
        ctx.name, ctx.dim, ctx.shape = name, dim, x.shape
        ctx.save_for_backward(indices)
        return _C.gather(x._impl, dim, indices._impl)

    @staticmethod
    def backward(ctx, g):
        (indices,) = ctx.saved_tensors
        zeros = _C.full(tuple(ctx.shape), 0.0, g.dtype.name, g._device_name)
        if g._requires_grad and is_grad_enabled():  # create_graph: recorded scatter_add
            return scatter_add(wrap(zeros), ctx.dim, indices, g), None, None, None
        return _C.scatter_add(zeros, ctx.dim, indices._impl, g._impl), None, None, None


# The values with grad run and record their node in C++ (csrc/autograd/indexing.h,
# _C.autograd_select: SortBackward, TopkBackward, MedianBackward); _Select is its
# `function`, whose formula serves create_graph (ctx.dim, ctx.shape, the saved indices).
_C._register_select(_Select)


def _values_at(x, indices, dim, name, values_impl=None):
    if x._requires_grad and is_grad_enabled():
        return _C.autograd_select(x, indices, dim, name)
    return Tensor(values_impl if values_impl is not None else _C.gather(x._impl, dim, indices._impl))


@returns_values_indices
def sort(input, dim=-1, descending=False, stable=True):
    """Sorts along ``dim``: ``(values, indices)`` with ``values = input.gather(dim, indices)``.

    Always stable (``stable`` is accepted for PyTorch compatibility): equal
    keys keep their input order in both directions; NaN sorts above every
    number (last ascending, first descending). Differentiable in ``values``.

    >>> import lucid
    >>> v, i = lucid.sort(lucid.tensor([3.0, 1.0, 2.0, 1.0]), descending=True)
    >>> v.tolist(), i.tolist()
    ([3.0, 2.0, 1.0, 1.0], [0, 2, 1, 3])
    """
    _check("sort", input)
    d = wrap_dim(dim, input.ndim, "sort")
    values, indices = _C.sort(input._impl, d, builtins.bool(descending))
    indices = Tensor(indices)
    if input.ndim == 0:
        return Tensor(values) if not input._requires_grad else input.clone(), indices
    return _values_at(input, indices, d, "sort", values), indices


def argsort(input, dim=-1, descending=False, stable=True):
    """The ``indices`` of :func:`sort` (int64)."""
    _check("argsort", input)
    return Tensor(_C.sort(input._impl, wrap_dim(dim, input.ndim, "argsort"), builtins.bool(descending))[1])


def msort(input):
    """``sort(input, dim=0).values``."""
    return sort(input, 0)[0]


def _narrow_index(indices, dim, k):
    starts = [0] * indices.ndim
    steps = [1] * indices.ndim
    lengths = list(indices.shape)
    lengths[dim] = k
    return _C.slice(indices._impl, starts, steps, lengths)


@returns_values_indices
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim``
    as ``(values, int64 indices)``, in sorted order (also when ``sorted=False``).
    Ties go to the lower index; NaN counts as the largest value. ValueError
    when ``k`` is not in ``[0, size]``.

    >>> import lucid
    >>> v, i = lucid.topk(lucid.tensor([1.0, 5.0, 3.0, 5.0]), 2)
    >>> v.tolist(), i.tolist()
    ([5.0, 5.0], [1, 3])
    """
    _check("topk", input)
    d = wrap_dim(dim, input.ndim, "topk")
    size = input.shape[d] if input.ndim else 1
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"topk(): argument 'k' must be an int, got {type(k).__name__}")
    if not 0 <= k <= size:
        raise ValueError(f"topk(): argument 'k' must be in [0, {size}] (the size of dim {d}), got {k}")
    _, order = _C.sort(input._impl, d, builtins.bool(largest))
    order = Tensor(order)
    if input.ndim == 0:
        return sort(input)[0] if k else input.reshape(0), order if k else order.reshape(0)
    indices = _narrow_index(order, d, builtins.int(k))
    return _values_at(input, indices, d, "topk"), indices


@returns_values_indices
def median(input, dim=None, keepdim=False):
    """The lower median (element ``(n - 1) // 2`` of the sorted values, as
    PyTorch), NaN if the line holds a NaN. Without ``dim``: a 0-d tensor over
    all elements; with ``dim``: ``(values, indices)`` where ``indices`` is the
    position of that element in ``input`` (the first NaN's when there is one).
    ValueError on an empty input. Differentiable in ``values``.

    >>> import lucid
    >>> lucid.median(lucid.tensor([4.0, 1.0, 3.0, 2.0])).item()
    2.0
    """
    _check("median", input)
    if dim is None:
        flat = input.reshape(-1)
        if flat.shape[0] == 0:
            raise ValueError("median(): argument 'input' is empty; the median of no elements is undefined")
        return median(flat, 0)[0]
    d = wrap_dim(dim, input.ndim, "median")
    x = input if input.ndim else input.reshape(1)
    n = x.shape[d]
    if n == 0:
        raise ValueError(f"median(): cannot take the median over dimension {d} of size 0")
    _, order = _C.sort(x._impl, d, False)
    # NaN sorts last: with m NaNs in a line, the first one sits at n - m.
    nan_count = _C.sum(_C.isnan(x._impl), [d], True, None)
    pos = _C.where(_C.gt(nan_count._impl, _C.full((), 0.0, "int64", x._device_name)),
                   _C.sub(_C.full((), float(n), "int64", x._device_name), nan_count._impl),
                   _C.full(nan_count.shape, float((n - 1) // 2), "int64", x._device_name))
    indices = _C.gather(order, d, pos._impl)
    values = _values_at(x, indices, d, "median")
    if not keepdim or input.ndim == 0:
        shape = list(x.shape)
        del shape[d]
        if input.ndim == 0:
            shape = []
        values, indices = values.reshape(shape), indices.reshape(shape)
    return values, indices


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct values of ``input`` (flattened), ascending; optionally
    ``inverse`` (int64, input's shape: where each element went) and
    ``counts`` (int64). Each NaN counts as distinct. Not differentiable.

    With ``dim``: the distinct slices along ``dim`` (``input.select(dim, i)``),
    sorted lexicographically (first element first, NaN above every number,
    a slice holding NaN distinct from every other), as PyTorch; ``inverse``
    is then 1-d (length ``input.shape[dim]``) and ``counts`` counts slices.
    The output is always sorted (``sorted`` is accepted for compatibility).

    >>> import lucid
    >>> u, inv, c = lucid.unique(lucid.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    >>> u.tolist(), inv.tolist(), c.tolist()
    ([1, 2, 3], [2, 0, 2, 1], [1, 1, 2])
    >>> lucid.unique(lucid.tensor([[1, 2], [0, 5], [1, 2]]), dim=0).tolist()
    [[0, 5], [1, 2]]
    """
    _check("unique", input)
    if dim is not None:
        if input.ndim == 0:
            raise IndexError("unique(): argument 'dim' is out of range: a 0-d tensor has no dimensions")
        return _unique_dim(input, wrap_dim(dim, input.ndim, "unique"), return_inverse, return_counts)
    flat = _C.reshape(input._impl, [-1])
    dev = flat._device_name
    values, order = _C.sort(flat._impl, 0, False)
    n = flat.shape[0]
    if n == 0:
        empty = _C.full((0,), 0.0, "int64", dev)
        out = [Tensor(values)] + ([_C.full(tuple(input.shape), 0.0, "int64", dev)] if return_inverse else []) \
            + ([empty] if return_counts else [])
        return out[0] if len(out) == 1 else tuple(out)
    # new[k]: sorted element k starts a run (differs from its predecessor).
    first = _C.full((1,), 1.0, "bool", dev)
    rest = _C.ne(_C.slice(values, [1], [1], [n - 1]), _C.slice(values, [0], [1], [n - 1]))
    new = _C.cat([first, rest], 0)
    starts = np.flatnonzero(Tensor(_C.to_device(new, "cpu") if dev != "cpu" else new).numpy()).astype(np.int64)
    starts_t = tensor(starts, device=dev)
    out = [_C.index_select(values, 0, starts_t._impl)]
    if return_inverse:
        run = _C.sub(_C.cumsum(new, 0), _C.full((), 1.0, "int64", dev))  # run number of each sorted element
        inverse = _C.scatter(_C.full((n,), 0.0, "int64", dev), 0, order, run)
        out.append(_C.reshape(inverse, list(input.shape)))
    if return_counts:
        counts = np.diff(np.append(starts, n)).astype(np.int64)
        out.append(tensor(counts, device=dev))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_dim(input, d, return_inverse, return_counts):
    """unique(dim=d): the slices along ``d`` become the rows of an [n, m]
    matrix, sorted lexicographically by stable sorts on one column at a time,
    last column first (each pass keeps the order of the columns after it for
    equal keys); a row starts a new slice when any element differs from the
    row before."""
    dev = input._device_name
    n = input.shape[d]
    rest = [s for k, s in enumerate(input.shape) if k != d]
    m = 1
    for s in rest:
        m *= s
    if n > 0 and m == 0:
        raise ValueError(f"unique(): input of shape {input.shape} has a size-0 dimension other than dim {d}; "
                         "there are no slices to compare")
    empty = _C.full((0,), 0.0, "int64", dev)
    if n == 0:
        out = [input.detach().clone()] + ([empty] if return_inverse else []) + ([empty] if return_counts else [])
        return out[0] if len(out) == 1 else tuple(out)
    rows = _C.contiguous(movedim(input.detach(), d, 0)._impl) if d else input.detach()
    rows = _C.reshape(rows._impl, [n, m])
    order = tensor(np.arange(n, dtype=np.int64), device=dev)._impl
    for j in range(m - 1, -1, -1):
        column = _C.reshape(_C.slice(rows, [0, j], [1, 1], [n, 1]), [n])
        _, step = _C.sort(_C.index_select(column, 0, order), 0, False)
        order = _C.index_select(order, 0, step)
    ranked = _C.index_select(rows, 0, order)
    first = _C.full((1,), 1.0, "bool", dev)
    if n > 1:
        differs = _C.ne(_C.slice(ranked, [1, 0], [1, 1], [n - 1, m]), _C.slice(ranked, [0, 0], [1, 1], [n - 1, m]))
        rest_new = _C.gt(_C.sum(differs, [1], False, None), _C.full((), 0.0, "int64", dev))
        new = _C.cat([first, rest_new], 0)
    else:
        new = first
    starts = np.flatnonzero(Tensor(_C.to_device(new, "cpu") if dev != "cpu" else new).numpy()).astype(np.int64)
    picked = _C.index_select(ranked, 0, tensor(starts, device=dev)._impl)
    values = _C.reshape(picked, [len(starts)] + rest)
    out = [movedim(values, 0, d) if d else values]
    if return_inverse:
        run = _C.sub(_C.cumsum(new, 0), _C.full((), 1.0, "int64", dev))
        out.append(_C.scatter(_C.full((n,), 0.0, "int64", dev), 0, order, run))
    if return_counts:
        out.append(tensor(np.diff(np.append(starts, n)).astype(np.int64), device=dev))
    return out[0] if len(out) == 1 else tuple(out)


def count_nonzero(input, dim=None):
    """How many elements are not zero (over ``dim``: an int or tuple; all when None); int64."""
    _check("count_nonzero", input)
    nz = _C.ne(input._impl, _C.full((), 0.0, input._dtype_name, input._device_name))
    return _sum(nz, dim=dim)


def bincount(input, weights=None, minlength=0):
    """Counts of each value in a 1-d tensor of non-negative integers: a tensor
    of length ``max(input.max() + 1, minlength)`` (int64; with ``weights``,
    the sum of the weights per value, in the weights' dtype — float32 for
    integer weights). ValueError for negative values or a non-1-d input.
    Reads the maximum back to the host (the output size depends on it).

    >>> import lucid
    >>> lucid.bincount(lucid.tensor([0, 2, 2, 5]), minlength=7).tolist()
    [1, 0, 2, 0, 0, 1, 0]
    """
    _check("bincount", input)
    if input.ndim != 1:
        raise ValueError(f"bincount(): argument 'input' must be 1-d, got {input.ndim}-d")
    if input.dtype.is_floating_point or input.dtype.name == "bool":
        raise TypeError(f"bincount(): argument 'input' must be an integer tensor, got {input.dtype}")
    if not isinstance(minlength, (int, np.integer)) or isinstance(minlength, bool) or minlength < 0:
        raise ValueError(f"bincount(): argument 'minlength' must be a non-negative int, got {minlength!r}")
    dev = input._device_name
    if weights is not None:
        _check("bincount", weights, "weights")
        if weights.shape != input.shape:
            raise ShapeError(f"bincount(): argument 'weights' must have input's shape {input.shape}, "
                             f"got {weights.shape}")
        if weights._device_name != dev:
            raise TypeError("bincount(): 'input' and 'weights' are on different devices")
    n = input.shape[0]
    if n:
        lo = builtins.int(_C.amin(input._impl, None, False).item())
        if lo < 0:
            raise ValueError(f"bincount(): argument 'input' must hold non-negative values, got {lo}")
        hi = builtins.int(_C.amax(input._impl, None, False).item())
    else:
        hi = -1
    length = builtins.max(hi + 1, builtins.int(minlength))
    if weights is None:
        src, dtype = _C.full((n,), 1.0, "int64", dev), "int64"
    else:
        dtype = weights.dtype.name if weights.dtype.is_floating_point else "float32"
        src = weights._impl if weights.dtype.name == dtype else _C.astype(weights._impl, dtype)
    zeros = _C.full((length,), 0.0, dtype, dev)
    if n == 0:
        return Tensor(zeros)
    return _C.scatter_add(zeros, 0, input._impl, src)


def nonzero(input, *, as_tuple=False):
    """Indices of the non-zero elements in row-major order: an int64 tensor of
    shape ``(count, ndim)``, or (``as_tuple=True``) one 1-d tensor per axis.
    Reads ``input != 0`` back to the host (the output size depends on it)."""
    _check("nonzero", input)
    mask = _C.ne(input._impl, _C.full((), 0.0, input._dtype_name, input._device_name)).to("cpu").numpy()
    where = np.argwhere(mask.reshape(input.shape)).astype(np.int64)
    dev = input.device
    if as_tuple:
        if input.ndim == 0:
            return (tensor(np.zeros(where.shape[0], np.int64), device=dev),)
        return tuple(tensor(np.ascontiguousarray(where[:, k]), device=dev) for k in range(input.ndim))
    return tensor(where.reshape(where.shape[0], input.ndim), device=dev)


def masked_select(input, mask):
    """The elements of ``input`` where ``mask`` (bool, broadcast with input) is
    True, as a 1-d tensor in row-major order; differentiable in ``input``."""
    _check("masked_select", input)
    _check("masked_select", mask, "mask")
    if mask.dtype.name != "bool":
        raise TypeError(f"masked_select(): argument 'mask' must be a bool tensor, got {mask.dtype}")
    shape = tuple(np.broadcast_shapes(input.shape, mask.shape))
    x = input if input.shape == shape else broadcast_to(input, shape)
    m = mask if mask.shape == shape else broadcast_to(mask, shape)
    if x.ndim == 0:
        x, m = x.reshape(1), m.reshape(1)
    return x[m]


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (either may be a scalar);
    a bool tensor of ``elements``' shape."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): argument 'elements' or 'test_elements' must be a tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    e = elements if isinstance(elements, Tensor) else constant(elements, like)
    t = test_elements if isinstance(test_elements, Tensor) else constant(test_elements, like)
    if t.numel() == 0:
        hit = full(tuple(e.shape), False, dtype="bool", device=e.device)
    else:
        hit = (e.reshape(*e.shape, 1) == t.reshape(-1)).any(-1)
    return hit.logical_not() if invert else hit


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """For each value of ``input``, the index in ``sorted_sequence`` (sorted on its last axis;
    1-D, or its leading axes matching ``input``'s) where it would be inserted to keep the order:
    before equal values (``side="left"``), after them with ``right=True`` / ``side="right"``.
    ``sorter``: indices sorting an unsorted sequence. A NaN value goes to the end (index n).
    int64, or int32 with ``out_int32``."""
    _check("searchsorted", sorted_sequence, "sorted_sequence")
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted(): argument 'side' must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise ValueError("searchsorted(): argument 'side' and 'right' can't be set to opposites, got side of "
                             "left while right was True")
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        _check("searchsorted", sorter, "sorter")
        if tuple(sorter.shape) != tuple(seq.shape) or sorter.dtype.is_floating_point:
            raise ValueError("searchsorted(): argument 'sorter' must be an integer tensor of sorted_sequence's "
                             f"shape {tuple(seq.shape)}, got {sorter.dtype} {tuple(sorter.shape)}")
        seq = gather(seq, seq.ndim - 1, sorter.to(dtype="int64"))
    scalar = not isinstance(input, Tensor)
    v = constant(input, seq, None if isinstance(input, builtins.float) and not seq.dtype.is_floating_point
               else seq.dtype) if scalar else input
    if seq.ndim == 0:
        raise ValueError("searchsorted(): argument 'sorted_sequence' must have at least 1 dimension")
    if seq.ndim > 1:
        if scalar or v.ndim != seq.ndim or tuple(v.shape[:-1]) != tuple(seq.shape[:-1]):
            raise ValueError("searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                             f"of boundaries tensor and input value tensor must match, got {tuple(seq.shape)} and "
                             f"{tuple(v.shape) if not scalar else ()}")
    if v.numel() * seq.shape[-1] > _COMPARE_LIMIT:  # a binary search on the host instead of the full comparison
        out = _searchsorted_host(seq, v, right)
        return out.to(dtype="int32") if out_int32 else out
    if seq.ndim > 1:
        cmp = seq.unsqueeze(-2)  # (..., 1, n) against (..., m, 1)
    else:
        cmp = seq
    vv = v.unsqueeze(-1)
    below = (cmp <= vv) if right else (cmp < vv)
    if vv.dtype.is_floating_point:  # a NaN value goes after everything, as PyTorch places it
        below = below.logical_or(vv.isnan())
    out = _sum(below.to(dtype="int64"), -1)
    return out.to(dtype="int32") if out_int32 else out


# Up to this many value x boundary comparisons, searchsorted compares on the tensors'
# stream (no host round trip); above it, numpy's binary search (O(m log n)) on the host.
_COMPARE_LIMIT = 1 << 22


def _searchsorted_host(seq, v, right):
    """searchsorted's indices by numpy's binary search, row by row for a batched sequence.
    Half precision is widened to float32 first (exact, so the order is unchanged); numpy
    places a NaN value after everything, as PyTorch does."""
    def host(t):
        if t.dtype.is_floating_point and t.dtype.name != "float64":
            t = t.to(dtype="float32")
        return t.to("cpu").numpy()

    side = "right" if right else "left"
    s_np, v_np = host(seq), host(v)
    if seq.ndim == 1:
        idx = np.searchsorted(s_np, v_np, side=side)
    else:
        rows, vals = s_np.reshape(-1, s_np.shape[-1]), v_np.reshape(-1, v_np.shape[-1])
        idx = np.stack([np.searchsorted(r, q, side=side) for r, q in zip(rows, vals)]).reshape(v_np.shape)
    return tensor(np.asarray(idx, dtype=np.int64), device=v.device)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value for 1-D sorted ``boundaries``: ``i`` with
    ``boundaries[i-1] < x <= boundaries[i]`` (``<=`` / ``<`` swapped with ``right=True``)."""
    _check("bucketize", boundaries, "boundaries")
    if boundaries.ndim != 1:
        raise ValueError(f"bucketize(): argument 'boundaries' must be a 1-D tensor, got {boundaries.ndim}-D")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapses each run of equal consecutive elements (``dim=None``: of the flattened input) or
    equal consecutive slices along ``dim`` into one. Returns the values, then the run index of
    each element / slice (``return_inverse``; input's shape, or its length on ``dim``) and the run
    lengths (``return_counts``), as requested. Found on the host; not differentiable."""
    _check("unique_consecutive", input)
    a = host_array(input)
    if dim is None:
        flat = a.reshape(-1)
        starts = np.ones(flat.size, dtype=bool)
        starts[1:] = flat[1:] != flat[:-1]
        vals = flat[starts]
        inv_shape = a.shape
    else:
        d = wrap_dim(dim, input.ndim, "unique_consecutive")
        m = np.moveaxis(a, d, 0)
        rows = m.reshape(m.shape[0], -1)
        starts = np.ones(rows.shape[0], dtype=bool)
        if rows.shape[0] > 1:
            starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
        vals = np.moveaxis(m[starts], 0, d)
        inv_shape = (rows.shape[0],)
    run = np.cumsum(starts) - 1
    out = [tensor(np.ascontiguousarray(vals), dtype=input.dtype, device=input.device)]
    if return_inverse:
        out.append(tensor(run.reshape(inv_shape).astype(np.int64), device=input.device))
    if return_counts:
        out.append(tensor(np.diff(np.append(np.flatnonzero(starts), starts.size)).astype(np.int64),
                          device=input.device))
    return out[0] if len(out) == 1 else tuple(out)


__all__ += ["isin", "searchsorted", "bucketize", "unique_consecutive"]
TENSOR_METHODS += ["unique_consecutive"]
