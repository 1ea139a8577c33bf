"""Indexing (csrc/ops/shape.cpp slices, csrc/ops/indexing.cpp gathers):
``x[idx]``, ``x[idx] = v``, gather, scatter, index_select, index_add, index_copy,
masked_fill; composed from those: take, select_scatter, slice_scatter, index_fill;
and the in-place forms masked_fill_ ... index_copy_.

Basic indices (ints, slices, None, Ellipsis) give views on the CPU stream
(negative slice steps copy: storage strides are non-negative) and new arrays
on the GPU stream, where MLX arrays are values: writing into ``x[1:]`` is
seen through ``x`` on the CPU stream only, while ``x[1:] = v`` itself updates
``x`` on both streams. One integer tensor (or list) or one boolean mask may
appear among the basic indices (reads copy; writes go through index_copy);
expressions with several index tensors follow numpy's advanced indexing
(advanced_index.py).
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from .._C import ShapeError
from .. import _C
from .._creation import full, ones, tensor, zeros
from .._tensor import Tensor
from ..autograd import Function, is_grad_enabled
from . import advanced_index  # several index tensors in one expression (it calls back into this module)
from . import shape as _shape_ops  # pad, for scatter's recorded gradient (shape's slices call back into this module)
from .common import as_tensor, is_tensor, wrap, wrap_dim
from .elementwise import mul, where
from .inplace import inplace_form

__all__ = ["getitem", "setitem", "gather", "scatter", "scatter_add", "index_select", "index_add", "index_copy",
           "take_along_dim"]
TENSOR_METHODS = ["gather", "scatter", "scatter_add", "index_select", "index_add", "index_copy", "take_along_dim"]


# ----- parsing an index -------------------------------------------------------

class _Plan:
    """What ``x[idx]`` means, worked out from the shapes alone.

    ``starts/steps/lengths`` slice every input axis (ints are length-1
    slices); ``shape`` is the basic result's shape (ints dropped, None added);
    ``advanced`` is None or (position in ``shape``, tensor, axes it covers,
    first input axis). ``to_front``: numpy's rule that when ints (which count
    as advanced indices next to a tensor) are not adjacent to the tensor
    index, the tensor's result axes go first.
    """

    __slots__ = ("starts", "steps", "lengths", "shape", "advanced", "to_front")

    def __init__(self):
        self.starts = self.steps = self.lengths = self.advanced = None
        self.shape, self.to_front = [], False


def _is_int(v) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))


def _as_index_tensor(item, device):
    if is_tensor(item):
        t = item
    else:
        arr = np.asarray(item)
        if arr.size == 0 and arr.dtype.kind == "f":  # [] is an empty integer index, as in numpy
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "biu":
            raise IndexError(f"getitem(): a list or array index must hold ints or bools, got dtype {arr.dtype}")
        t = tensor(arr.astype(np.int64) if arr.dtype.kind in "iu" else arr)
    if t.dtype.is_floating_point:
        raise IndexError(f"getitem(): tensors used as indices must be integer or bool, got {t.dtype}")
    if t._device_name != device:
        t = t.to(device)
    return t


def _plan_first_axis(shape, idx):
    """The plan for ``x[int]`` or ``x[slice]`` on a tensor with dims, the common
    case, without the general parser; None sends anything else (and any error)
    to ``_plan``."""
    size = shape[0]
    ndim = len(shape)
    plan = _Plan()
    if type(idx) is slice:
        if idx.step == 0:
            return None
        start, stop, step = idx.indices(size)
        n = len(range(start, stop, step))
        plan.starts = [start if n else 0] + [0] * (ndim - 1)
        plan.steps = [step] + [1] * (ndim - 1)
        plan.lengths = [n, *shape[1:]]
        plan.shape = list(plan.lengths)
    else:
        if not -size <= idx < size:
            return None
        plan.starts = [idx % size] + [0] * (ndim - 1)
        plan.steps = [1] * ndim
        plan.lengths = [1, *shape[1:]]
        plan.shape = list(shape[1:])
    return plan


def _plan(x, idx, fn: str) -> _Plan:
    def is_tensor(v):
        return isinstance(v, Tensor)

    shape, ndim = x.shape, x.ndim  # properties build a new tuple per access
    items = list(idx) if isinstance(idx, tuple) else [idx]
    if builtins.sum(1 for it in items if it is Ellipsis) > 1:
        raise IndexError(f"{fn}(): an index can only have a single ellipsis ('...')")
    parsed = []
    consumed = 0
    for it in items:
        if it is None or it is Ellipsis or isinstance(it, slice):
            parsed.append(it)
            consumed += isinstance(it, slice)
        elif _is_int(it) or (is_tensor(it) and it.ndim == 0 and not it.dtype.is_floating_point
                             and it.dtype.name != "bool"):
            parsed.append(builtins.int(it))
            consumed += 1
        elif isinstance(it, (bool, np.bool_)):
            raise IndexError(f"{fn}(): a bool index is not supported; use a boolean tensor mask")
        elif is_tensor(it) or isinstance(it, (list, np.ndarray)):
            t = _as_index_tensor(it, x._device_name)
            parsed.append(t)
            consumed += t.ndim if t.dtype.name == "bool" else 1
        else:
            raise IndexError(f"{fn}(): unsupported index type {type(it).__name__}; expected int, slice, None, "
                             "Ellipsis, or an integer / boolean tensor")
    if consumed > ndim:
        raise IndexError(f"{fn}(): too many indices for a tensor of dimension {ndim} ({consumed} given)")
    if Ellipsis in [p for p in parsed if not is_tensor(p)]:
        k = next(i for i, p in enumerate(parsed) if p is Ellipsis)
        parsed[k:k + 1] = [slice(None)] * (ndim - consumed)
    else:
        parsed += [slice(None)] * (ndim - consumed)

    plan = _Plan()
    plan.starts, plan.steps, plan.lengths, plan.shape, plan.advanced = [], [], [], [], None
    advanced_at = [k for k, p in enumerate(parsed) if is_tensor(p) or isinstance(p, int)]
    plan.to_front = (any(is_tensor(p) for p in parsed)
                     and advanced_at != list(range(advanced_at[0], advanced_at[-1] + 1)))
    axis = 0
    for p in parsed:
        if p is None:
            plan.shape.append(1)
            continue
        if is_tensor(p):
            if plan.advanced is not None:
                raise NotImplementedError(f"{fn}(): only one integer-tensor or boolean-mask index is supported per "
                                          "indexing expression; index in two steps")
            k = p.ndim if p.dtype.name == "bool" else 1
            covered = shape[axis:axis + k]
            if p.dtype.name == "bool" and p.shape != tuple(covered):
                raise IndexError(f"{fn}(): boolean mask of shape {p.shape} does not match the indexed axes "
                                 f"{axis}..{axis + k - 1} of shape {tuple(covered)}")
            plan.advanced = (len(plan.shape), p, k, axis)
            for size in covered:
                plan.starts.append(0)
                plan.steps.append(1)
                plan.lengths.append(size)
                plan.shape.append(size)
            axis += k
            continue
        size = shape[axis]
        if isinstance(p, slice):
            start, stop, step = p.indices(size) if p.step != 0 else (0, 0, 0)
            if step == 0:
                raise ValueError(f"{fn}(): slice step cannot be zero")
            n = len(range(start, stop, step))
            plan.starts.append(start if n else 0)
            plan.steps.append(step)
            plan.lengths.append(n)
            plan.shape.append(n)
        else:
            if not -size <= p < size:
                raise IndexError(f"{fn}(): index {p} is out of bounds for dimension {axis} with size {size}")
            plan.starts.append(p % size)
            plan.steps.append(1)
            plan.lengths.append(1)
        axis += 1
    return plan


# ----- reading ---------------------------------------------------------------

class _BasicIndex(Function):
    @staticmethod
    def forward(ctx, x, plan):
        ctx.in_shape, ctx.plan = x.shape, plan
        ctx.dtype, ctx.device = x.dtype, x._device_name
        sliced = _C.slice(x._impl, plan.starts, plan.steps, plan.lengths)
        return _C.reshape(sliced, plan.shape)

    @staticmethod
    def backward(ctx, g):
        if g._requires_grad and is_grad_enabled():  # create_graph: the scatter is recorded (in C++)
            p = ctx.plan
            return _C.autograd_slice_scatter(g, ctx.in_shape, p.starts, p.steps, p.lengths, p.shape), None
        return _slice_scatter(g, ctx.in_shape, ctx.plan), None


def _slice_scatter(g, in_shape, p):
    """Zeros of ``in_shape`` with ``g`` written where ``x[idx]`` read (``p`` its plan)."""
    out = zeros(in_shape, dtype=g.dtype, device=g.device)
    _C.slice_assign(out._impl, p.starts, p.steps, p.lengths, _C.reshape(g._impl, p.lengths))
    return out


class _SliceScatter(Function):
    """x[idx]'s backward as an op of its own, recorded under create_graph (in C++:
    _C.autograd_slice_scatter); being linear in g, its gradient is the gradient's own x[idx]."""

    @staticmethod
    def forward(ctx, g, in_shape, plan):
        ctx.plan = plan
        return _slice_scatter(g, in_shape, plan)

    @staticmethod
    def backward(ctx, gg):
        p = ctx.plan
        return _C.autograd_basic_index(gg, p.starts, p.steps, p.lengths, p.shape), None, None


def getitem(x, idx):
    """``x[idx]`` for ints, slices (any step), None, Ellipsis, plus integer
    tensors / lists (negative entries count from the end) and boolean masks;
    several of them broadcast together as in numpy (advanced_index.py).

    Out-of-range ints raise IndexError naming the dimension and its size.
    CPU stream: basic indices give a view sharing memory (negative steps
    copy); GPU stream: always a new array. Differentiable.

    >>> import lucid
    >>> x = lucid.arange(12).reshape(3, 4)
    >>> x[1].tolist(), x[:, ::2].tolist(), x[..., None].shape
    ([4, 5, 6, 7], [[0, 2], [4, 6], [8, 10]], (3, 4, 1))
    >>> x[lucid.tensor([2, 0])].tolist()
    [[8, 9, 10, 11], [0, 1, 2, 3]]
    >>> x[x > 9].tolist()
    [10, 11]
    """
    plan = None
    if type(idx) is slice or type(idx) is int:
        shape = x._impl.shape
        if shape:
            plan = _plan_first_axis(shape, idx)
    if plan is None:
        if type(idx) is tuple and advanced_index.count_tensor_indices(idx) > 1:
            return advanced_index.getitem(x, idx)
        plan = _plan(x, idx, "getitem")
    out = _C.autograd_basic_index(x, plan.starts, plan.steps, plan.lengths, plan.shape)  # recorded when needed
    if plan.advanced is None:
        return out
    pos, t, k, _ = plan.advanced
    if t.dtype.name == "bool":
        # Merge the masked axes into one, then select the True positions.
        merged = int(np.prod(out.shape[pos:pos + k]))
        flat = out.reshape(list(out.shape[:pos]) + [merged] + list(out.shape[pos + k:]))
        where = np.flatnonzero(t.to("cpu").numpy()).astype(np.int64)
        result, n = index_select(flat, pos, tensor(where, device=x.device)), 1
    else:
        picked = _index_select(out, pos, t.reshape(-1), wrap_negative=True)
        result = picked.reshape(list(out.shape[:pos]) + list(t.shape) + list(out.shape[pos + 1:]))
        n = t.ndim
    if plan.to_front and pos:
        order = list(range(pos, pos + n)) + [i for i in range(result.ndim) if not pos <= i < pos + n]
        result = result.permute(order)
    return result


# ----- writing ---------------------------------------------------------------

def _value_for(plan, value, x, fn):
    """``value`` as a tensor of x's dtype and device, shaped like the slices."""
    v = as_tensor(value, x, "value")
    if v._device_name != x._device_name:
        v = v.to(x.device)
    while v.ndim > len(plan.shape) and v.shape[0] == 1:
        v = v.reshape(v.shape[1:])
    target = tuple(plan.shape)
    try:
        ok = np.broadcast_shapes(v.shape, target) == target
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"{fn}(): value of shape {v.shape} cannot be broadcast to the indexed shape {target}")
    if v.dtype != x.dtype:
        if v.dtype.is_floating_point and not x.dtype.is_floating_point and v.requires_grad:
            raise TypeError(f"{fn}(): cannot write a float value that requires grad into a {x.dtype} tensor")
        v = v.to(x.dtype)
    v = v.expand(target)
    return v if plan.lengths is None else v.reshape(plan.lengths)


class _SetItem(Function):
    """Out-of-place x with the slice replaced: used when autograd records (in C++:
    _C.autograd_setitem records its node; this formula serves create_graph)."""

    @staticmethod
    def forward(ctx, x, value, plan):
        ctx.plan = plan
        out = _C.clone(x._impl)
        _C.slice_assign(out, plan.starts, plan.steps, plan.lengths, value._impl)
        return wrap(out)

    @staticmethod
    def backward(ctx, g):
        p = ctx.plan
        if g._requires_grad and is_grad_enabled():  # create_graph: both gradients recorded (linear in g)
            zero = _C.full((), 0.0, g.dtype.name, g._device_name)
            gx = _C.autograd_setitem(g, zero, p.starts, p.steps, p.lengths, p.shape) if ctx.needs_input_grad[0] else None
            gv = (_C.autograd_basic_index(g, p.starts, p.steps, p.lengths, p.shape).reshape(p.lengths)
                  if ctx.needs_input_grad[1] else None)
            return gx, gv, None
        gx = gv = None
        if ctx.needs_input_grad[0]:
            gx = _C.clone(g._impl)
            zero = _C.full((), 0.0, g.dtype.name, g._device_name)
            _C.slice_assign(gx._impl, p.starts, p.steps, p.lengths, zero)
        if ctx.needs_input_grad[1]:
            gv = _C.slice(g._impl, p.starts, p.steps, p.lengths)
        return gx, gv, None


# Basic indexing, setitem's copy and x[idx]'s backward run and record in C++
# (csrc/autograd/indexing.h: _C.basic_index, _C.autograd_setitem,
# _C.autograd_slice_scatter); these Functions are their nodes' `function`, whose
# formulas serve create_graph (reading the node's `plan`).
_C._register_indexing(_BasicIndex, _Plan, _SetItem, _SliceScatter)


def setitem(x, idx, value):
    """``x[idx] = value`` for the indices :func:`getitem` takes; ``value`` is a
    tensor (broadcast to the shape ``x[idx]`` has, cast to x's dtype) or a
    number. With an integer-tensor index that repeats a position, the CPU
    stream keeps the last value and the GPU stream an unspecified one.

    CPU stream: writes the bytes in place, so views of ``x`` see them. GPU
    stream: ``x`` is rebound to an updated array (other GPU tensors taken from
    ``x`` earlier keep their values). When autograd records (``x`` or
    ``value`` requires grad), ``x`` is rebound to a new graph node instead of
    written in place, so earlier views do not see the write; a leaf that
    requires grad cannot be modified (RuntimeError), as in PyTorch.

    >>> import lucid
    >>> x = lucid.zeros(2, 3)
    >>> x[0, 1:] = 7.0
    >>> x[1, lucid.tensor([0, 2])] = lucid.tensor([1.0, 2.0])
    >>> x.tolist()
    [[0.0, 7.0, 7.0], [1.0, 0.0, 2.0]]
    """
    if type(idx) is tuple and advanced_index.count_tensor_indices(idx) > 1:
        return advanced_index.setitem(x, idx, value)
    plan = _plan(x, idx, "setitem")
    recording = is_grad_enabled() and (x.requires_grad or (is_tensor(value) and value.requires_grad))
    if recording and x.requires_grad and x.grad_fn is None:
        raise RuntimeError("setitem(): a leaf tensor that requires grad cannot be modified in place; use "
                           "lucid.no_grad() or build a new tensor")
    if plan.advanced is not None:
        return _write(x, plan, _merge_advanced(x, plan, value))
    return _write(x, plan, value)


def _merge_advanced(x, plan, value):
    """The indexed region of x with ``value`` stored at the tensor / mask
    positions: x[basic part] as a new tensor, updated with index_copy."""
    pos, t, k, _ = plan.advanced
    region = _C.autograd_basic_index(x, plan.starts, plan.steps, plan.lengths, plan.shape)
    merged = int(np.prod(region.shape[pos:pos + k]))
    flat = region.reshape(list(region.shape[:pos]) + [merged] + list(region.shape[pos + k:]))
    if t.dtype.name == "bool":
        where = tensor(np.flatnonzero(t.to("cpu").numpy()).astype(np.int64), device=x.device)
        picked_shape = list(region.shape[:pos]) + [where.shape[0]] + list(region.shape[pos + k:])
        n = 1
    else:
        where = _C.wrap_index(t.reshape(-1)._impl, region.shape[pos], pos, "setitem")
        picked_shape = list(region.shape[:pos]) + list(t.shape) + list(region.shape[pos + 1:])
        n = t.ndim
    # The value is shaped like x[idx]; undo numpy's move of the index axes to the front.
    order = list(range(len(picked_shape)))
    if plan.to_front and pos:
        order = list(range(pos, pos + n)) + [i for i in order if not pos <= i < pos + n]
    shown = [picked_shape[i] for i in order]
    probe = _Plan()
    probe.shape = shown
    v = _value_for(probe, value, x, "setitem").expand(shown)
    if order != sorted(order):
        inverse = [order.index(i) for i in range(len(order))]
        v = v.permute(inverse)
    v = v.reshape(list(flat.shape[:pos]) + [where.shape[0]] + list(flat.shape[pos + 1:]))
    return index_copy(flat, pos, where, v).reshape(plan.shape)


def _write(x, plan, value):
    """Stores ``value`` (a tensor broadcastable to plan.shape) into x's slices."""
    v = _value_for(plan, value, x, "setitem")
    if is_grad_enabled() and (x.requires_grad or v.requires_grad):
        # The node records x's current producer (Node.edges), so consumers of
        # x's old value keep their gradient path after x is rebound here.
        new = _C.autograd_setitem(x, v, plan.starts, plan.steps, plan.lengths, plan.shape)
        object.__setattr__(x, "_impl", new._impl)
        x.grad_fn, x._output_nr = new.grad_fn, new._output_nr
        Tensor.__setattr__(x, "requires_grad", new.requires_grad)
        return x  # rebound, not overwritten: no version bump (ctx.saved_tensors compares the handle)
    _C.slice_assign(x._impl, plan.starts, plan.steps, plan.lengths, v._impl)
    x._version += 1
    return x


# ----- gathers and scatters ----------------------------------------------------

def _index_arg(index, x, fn: str):
    if not is_tensor(index):
        raise TypeError(f"{fn}(): argument 'index' must be an integer tensor, got {type(index).__name__}")
    if index.dtype.is_floating_point or index.dtype.name == "bool":
        raise TypeError(f"{fn}(): argument 'index' must be an integer tensor, got {index.dtype}")
    if index._device_name != x._device_name:
        raise ValueError(f"{fn}(): argument 'index' is on '{index._device_name}', the input on "
                         f"'{x._device_name}'; move one with .to()")
    return index


def _dim_arg(dim, x, fn):
    return wrap_dim(dim, x.ndim, fn)


# The gathers and scatters run and record their node in C++ (csrc/autograd/indexing.h,
# _C.autograd_<op>); these Functions are the nodes' `function`, whose formulas serve
# create_graph and read the node's fields: ctx.dim, ctx.in_shape (the input's shape),
# ctx.params (src's shape) and the saved index.

class _Gather(Function):
    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.in_shape, ctx.dim = x.shape, dim
        ctx.save_for_backward(index)
        return _C.gather(x._impl, dim, index._impl)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        base = zeros(ctx.in_shape, dtype=g.dtype, device=g.device)
        if g._requires_grad and is_grad_enabled():  # create_graph: recorded scatter_add
            return scatter_add(base, ctx.dim, index, g), None, None
        return _C.scatter_add(base._impl, ctx.dim, index._impl, g._impl), None, None


def gather(input, dim, index):
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (``input[i][index[i][j]]``
    for ``dim=1``, and so on). ``index`` is an integer tensor with ``input``'s
    number of dims, no larger than ``input`` on the other axes; ``out`` has its
    shape. Values outside ``[0, input.size(dim))`` raise IndexError (checked on
    both streams before reading). Gradient: scatter-added into zeros.

    >>> import lucid
    >>> x = lucid.tensor([[1, 2], [3, 4]])
    >>> lucid.gather(x, 1, lucid.tensor([[0, 0], [1, 0]])).tolist()
    [[1, 1], [4, 3]]
    """
    d = _dim_arg(dim, input, "gather")
    return _autograd_gather(input, d, _index_arg(index, input, "gather"))


def take_along_dim(input, indices, dim):
    """numpy's take_along_axis: :func:`gather` with ``indices`` broadcast against ``input``.

    >>> import lucid
    >>> lucid.take_along_dim(lucid.tensor([[10, 30, 20]]), lucid.tensor([[1]]), 1).tolist()
    [[30]]
    """
    d = _dim_arg(dim, input, "take_along_dim")
    index = _index_arg(indices, input, "take_along_dim")
    if index.ndim != input.ndim:
        raise ValueError(f"take_along_dim(): argument 'indices' must have the input's {input.ndim} dims, "
                         f"got shape {index.shape}")
    try:
        shape = np.broadcast_shapes(tuple(s if i != d else 1 for i, s in enumerate(input.shape)),
                                    tuple(s if i != d else 1 for i, s in enumerate(index.shape)))
    except ValueError:
        raise ShapeError(f"take_along_dim(): shapes {input.shape} and {index.shape} do not broadcast "
                         f"off dim {d}") from None
    x = input.expand([s if i != d else input.shape[d] for i, s in enumerate(shape)])
    index = index.expand([s if i != d else index.shape[d] for i, s in enumerate(shape)])
    return gather(x, d, index)


def _recording(g):
    return g._requires_grad and is_grad_enabled()


def _src_grad_recorded(g, dim, index, src_shape):
    """The gradient of scatter / scatter_add's src, recorded (create_graph): g read at
    index, zero-padded at the end of each axis to src's shape (only src's leading
    block, index's shape, was read)."""
    picked = gather(g, dim, index)
    widths = []
    for i in reversed(range(picked.ndim)):
        widths += [0, src_shape[i] - picked.shape[i]]
    return _shape_ops.pad(picked, widths) if any(widths) else picked


class _ScatterAdd(Function):
    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.dim, ctx.params = dim, src.shape
        ctx.save_for_backward(index)
        return _C.scatter_add(x._impl, dim, index._impl, src._impl)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        gsrc = None
        if ctx.needs_input_grad[3] and _recording(g):
            gsrc = _src_grad_recorded(g, ctx.dim, index, ctx.params)
        elif ctx.needs_input_grad[3]:
            # Only src's leading block (index's shape) was read.
            picked = gather(g, ctx.dim, index)
            gsrc = zeros(tuple(ctx.params), dtype=g.dtype, device=g.device)
            _C.slice_assign(gsrc._impl, [0] * g.ndim, [1] * g.ndim, list(index.shape), picked._impl)
        return g, None, None, gsrc


def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src[i][j]`` added at ``[index[i][j]][j]``
    (``dim=0``); repeated indices accumulate. ``index`` has ``input``'s dims and
    is no larger than ``src`` (anywhere) or ``input`` (off ``dim``); ``src``
    has ``input``'s dtype. Out-of-range indices raise IndexError.

    >>> import lucid
    >>> lucid.scatter_add(lucid.zeros(3), 0, lucid.tensor([0, 2, 0]), lucid.tensor([1.0, 2.0, 3.0])).tolist()
    [4.0, 0.0, 2.0]
    """
    d = _dim_arg(dim, input, "scatter_add")
    src = as_tensor(src, input, "src")
    return _autograd_scatter_add(input, d, _index_arg(index, input, "scatter_add"), src)


class _IndexSelect(Function):
    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.in_shape, ctx.dim = x.shape, dim
        ctx.save_for_backward(index)
        return _C.index_select(x._impl, dim, index._impl)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        base = zeros(ctx.in_shape, dtype=g.dtype, device=g.device)
        if g._requires_grad and is_grad_enabled():  # create_graph: recorded index_add
            return index_add(base, ctx.dim, index, g), None, None
        return _C.index_add(base._impl, ctx.dim, index._impl, g._impl), None, None


def index_select(input, dim, index):
    """The slices of ``input`` at positions ``index`` (1-d integer tensor,
    values in ``[0, size)``) along ``dim``; output's ``dim`` has ``len(index)``.
    Gradient: index-added into zeros.

    >>> import lucid
    >>> lucid.tensor([[1, 2], [3, 4], [5, 6]]).index_select(0, lucid.tensor([2, 0])).tolist()
    [[5, 6], [1, 2]]
    """
    d = _dim_arg(dim, input, "index_select")
    return _autograd_index_select(input, d, _index_arg(index, input, "index_select"))


def _index_select(x, dim, index, wrap_negative=False):
    if wrap_negative:
        index = _C.wrap_index(index._impl, x.shape[dim], dim, "getitem")
    return _autograd_index_select(x, dim, index)


class _IndexAdd(Function):
    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.dim = dim
        ctx.save_for_backward(index)
        return _C.index_add(x._impl, dim, index._impl, src._impl)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        gsrc = index_select(g, ctx.dim, index) if ctx.needs_input_grad[3] else None
        return g, None, None, gsrc


def index_add(input, dim, index, source, alpha=1):
    """A copy of ``input`` with ``alpha * source``'s slices added at rows
    ``index`` (1-d) along ``dim``; repeated indices accumulate. ``source`` has
    ``input``'s shape except ``len(index)`` on ``dim``, and its dtype.

    >>> import lucid
    >>> lucid.index_add(lucid.zeros(3), 0, lucid.tensor([2, 2]), lucid.tensor([1.0, 5.0])).tolist()
    [0.0, 0.0, 6.0]
    """
    d = _dim_arg(dim, input, "index_add")
    source = as_tensor(source, input, "source")
    if alpha != 1:
        source = mul(source, alpha)
    return _autograd_index_add(input, d, _index_arg(index, input, "index_add"), source)


class _Scatter(Function):
    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.dim, ctx.params = dim, src.shape
        ctx.save_for_backward(index)
        return _C.scatter(x._impl, dim, index._impl, src._impl)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        gx = gsrc = None
        if _recording(g):  # create_graph: both recorded (scatter of g is this op again)
            if ctx.needs_input_grad[0]:
                gx = scatter(g, ctx.dim, index, zeros(index.shape, dtype=g.dtype, device=g.device))
            if ctx.needs_input_grad[3]:
                gsrc = _src_grad_recorded(g, ctx.dim, index, ctx.params)
            return gx, None, None, gsrc
        if ctx.needs_input_grad[0]:  # overwritten positions get no gradient
            blank = zeros(index.shape, dtype=g.dtype, device=g.device)
            gx = _C.scatter(g._impl, ctx.dim, index._impl, blank._impl)
        if ctx.needs_input_grad[3]:
            picked = gather(g, ctx.dim, index)
            gsrc = zeros(tuple(ctx.params), dtype=g.dtype, device=g.device)
            _C.slice_assign(gsrc._impl, [0] * g.ndim, [1] * g.ndim, list(index.shape), picked._impl)
        return gx, None, None, gsrc


def scatter(input, dim, index, src):
    """A copy of ``input`` with ``src[i][j]`` stored at ``[index[i][j]][j]``
    (``dim=0``); the out-of-place form of PyTorch's ``scatter_``. ``src`` is a
    tensor of ``input``'s dtype or a number. Where an index repeats, the CPU
    stream keeps the last value and the GPU stream an unspecified one.

    >>> import lucid
    >>> lucid.scatter(lucid.zeros(2, 3), 1, lucid.tensor([[2], [0]]), lucid.tensor([[5.0], [6.0]])).tolist()
    [[0.0, 0.0, 5.0], [6.0, 0.0, 0.0]]
    """
    d = _dim_arg(dim, input, "scatter")
    index = _index_arg(index, input, "scatter")
    if not is_tensor(src):
        src = as_tensor(src, input, "src").to(input.dtype).expand(index.shape)
    return _autograd_scatter(input, d, index, src)


class _IndexCopy(Function):
    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.dim, ctx.params = dim, src.shape
        ctx.save_for_backward(index)
        return _C.index_copy(x._impl, dim, index._impl, src._impl)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        gx = gsrc = None
        if ctx.needs_input_grad[0]:
            blank = zeros(tuple(ctx.params), dtype=g.dtype, device=g.device)
            gx = index_copy(g, ctx.dim, index, blank) if _recording(g) else \
                _C.index_copy(g._impl, ctx.dim, index._impl, blank._impl)
        if ctx.needs_input_grad[3]:
            gsrc = index_select(g, ctx.dim, index)
        return gx, None, None, gsrc


def index_copy(input, dim, index, source):
    """A copy of ``input`` whose rows ``index`` (1-d) along ``dim`` are
    replaced by ``source``'s rows (``input``'s shape except ``len(index)`` on
    ``dim``; same dtype). Repeated indices: as in :func:`scatter`.

    >>> import lucid
    >>> lucid.index_copy(lucid.zeros(3, 2), 0, lucid.tensor([2, 0]), lucid.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[3.0, 4.0], [0.0, 0.0], [1.0, 2.0]]
    """
    d = _dim_arg(dim, input, "index_copy")
    return _autograd_index_copy(input, d, _index_arg(index, input, "index_copy"),
                                as_tensor(source, input, "source"))


_C._register_gather(_Gather, _IndexSelect, _ScatterAdd, _Scatter, _IndexAdd, _IndexCopy)
_autograd_gather, _autograd_index_select = _C.autograd_gather, _C.autograd_index_select
_autograd_scatter_add, _autograd_scatter = _C.autograd_scatter_add, _C.autograd_scatter
_autograd_index_add, _autograd_index_copy = _C.autograd_index_add, _C.autograd_index_copy


# ----- masks ---------------------------------------------------------------------------

def masked_fill(input, mask, value):
    """``value`` where the boolean ``mask`` (broadcast to ``input``) is true, else
    ``input``; the dtype stays ``input``'s. Differentiable in ``input``.

    >>> import lucid
    >>> lucid.masked_fill(lucid.tensor([1.0, 2.0]), lucid.tensor([True, False]), -1.0).tolist()
    [-1.0, 2.0]
    """
    if not is_tensor(input):
        raise TypeError(f"masked_fill(): argument 'input' must be a Tensor, got {type(input).__name__}")
    if not is_tensor(mask) or mask.dtype.name != "bool":
        raise TypeError("masked_fill(): argument 'mask' must be a bool Tensor, got "
                        f"{mask.dtype if is_tensor(mask) else type(mask).__name__}")
    if is_tensor(value):
        if value.ndim != 0:
            raise ValueError(f"masked_fill(): argument 'value' must be a 0-d tensor or a number, got shape "
                             f"{tuple(value.shape)}")
        value = value.to(dtype=input.dtype)
    else:
        value = as_tensor(value, input, "value").to(dtype=input.dtype)
    return where(mask, value, input)


__all__ += ["masked_fill"]
TENSOR_METHODS += ["masked_fill"]


# ----- composed: take, select_scatter, slice_scatter, index_fill ----------------------------

def _check_tensor(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


def _int_like(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _int_index(fn, index, argument="index"):
    if not isinstance(index, Tensor) or index.dtype.is_floating_point or index.dtype.name == "bool":
        raise TypeError(f"{fn}(): argument '{argument}' must be an integer tensor, got "
                        f"{index.dtype if isinstance(index, Tensor) else type(index).__name__}")


def take(input, index):
    """``input`` read as 1-D at ``index`` (any shape; negative counts from the end); the
    result has the index's shape."""
    _check_tensor("take", input)
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
    _check_tensor("select_scatter", input)
    _check_tensor("select_scatter", src, "src")
    d = wrap_dim(dim, input.ndim, "select_scatter")
    n = input.shape[d]
    if not _int_like(index) or not -n <= index < n:
        raise IndexError(f"select_scatter(): argument 'index' {index!r} is out of range for dimension {d} of size "
                         f"{n}")
    want = tuple(input.shape[:d]) + tuple(input.shape[d + 1:])
    if tuple(src.shape) != want:
        raise ShapeError(f"select_scatter(): argument 'src' must have shape {want}, got {tuple(src.shape)}")
    return _scatter_rows("select_scatter", input, src.unsqueeze(d), d, [builtins.int(index) % n])


def _scatter_rows(fn, input, src, d, rows):
    if src.dtype != input.dtype:
        raise TypeError(f"{fn}(): argument 'src' must have input's dtype {input.dtype}, got {src.dtype}")
    if not rows:
        return input.clone()
    return index_copy(input, d, tensor(np.asarray(rows, dtype=np.int64), device=input.device), src)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` whose slice ``[start:end:step]`` along ``dim`` is ``src``."""
    _check_tensor("slice_scatter", input)
    _check_tensor("slice_scatter", src, "src")
    d = wrap_dim(dim, input.ndim, "slice_scatter")
    if not _int_like(step) or step <= 0:
        raise ValueError(f"slice_scatter(): argument 'step' must be a positive int, got {step!r}")
    rows = list(range(input.shape[d]))[slice(start, end, step)]
    want = tuple(input.shape[:d]) + (len(rows),) + tuple(input.shape[d + 1:])
    if tuple(src.shape) != want:
        raise ShapeError(f"slice_scatter(): argument 'src' must have shape {want}, got {tuple(src.shape)}")
    return _scatter_rows("slice_scatter", input, src, d, rows)


def index_fill(input, dim, index, value):
    """``input`` with the positions ``index`` (1-D int64) along ``dim`` set to ``value``
    (a number or a 0-d tensor); differentiable in ``input`` (zero gradient where
    filled)."""
    _check_tensor("index_fill", input)
    d = wrap_dim(dim, input.ndim, "index_fill")
    if not isinstance(index, Tensor) or index.ndim > 1 or index.dtype.name != "int64":
        raise TypeError("index_fill(): argument 'index' must be a 0-d or 1-D int64 tensor")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"index_fill(): argument 'value' must be a number or a 0-d tensor, got shape "
                             f"{tuple(value.shape)}")
    elif not isinstance(value, numbers.Number):
        raise TypeError(f"index_fill(): argument 'value' must be a number or a 0-d tensor, got {type(value).__name__}")
    n = input.shape[d] if input.ndim else 1
    # which positions along dim are filled: index_add of ones into a zero vector
    hit = index_add(zeros(n, device=input.device), 0, index.reshape(-1),
                       ones(index.numel(), device=input.device)) > 0
    shape = [1] * input.ndim
    if input.ndim:
        shape[d] = n
    mask = hit.reshape(shape) if input.ndim else hit.reshape(())
    filler = value.to(input.dtype) if isinstance(value, Tensor) else full((), value, dtype=input.dtype,
                                                                                   device=input.device)
    return where(mask, filler, input)


__all__ += ["take", "select_scatter", "slice_scatter", "index_fill"]
TENSOR_METHODS += ["take", "select_scatter", "slice_scatter", "index_fill"]


# ----- in-place forms: computed apart and copied into the tensor's memory (its version moves),
# or, with the graph recorded, run differentiably and the tensor rebound to the result; a leaf
# that requires grad is refused while grad mode is on, as PyTorch (lucid._ops.inplace).

masked_fill_ = inplace_form("masked_fill_", masked_fill)
index_fill_ = inplace_form("index_fill_", index_fill)
scatter_ = inplace_form("scatter_", scatter)
scatter_add_ = inplace_form("scatter_add_", scatter_add)
index_add_ = inplace_form("index_add_", index_add)
index_copy_ = inplace_form("index_copy_", index_copy)

_INPLACE = ["masked_fill_", "index_fill_", "scatter_", "scatter_add_", "index_add_", "index_copy_"]
__all__ += _INPLACE
TENSOR_METHODS += _INPLACE
