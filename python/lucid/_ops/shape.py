"""Shape ops (csrc/ops/shape.cpp): reshape, permute, expand, joining, splitting, padding,
triangles; numpy's spellings and rearrangements (ravel, swapdims, rot90, fliplr / flipud,
broadcast_tensors / broadcast_shapes, repeat_interleave, numel); the in-place view forms
(squeeze_, unsqueeze_, t_, transpose_).

Views: on the CPU stream ``view``, ``reshape`` (when the strides allow),
``squeeze``, ``unsqueeze``, ``flatten`` (when the strides allow),
``transpose``, ``permute``, ``expand``, ``split``/``chunk`` and basic
indexing return tensors that share the input's storage, so a write through
one is visible in the other (as in numpy and PyTorch). On the GPU stream MLX
arrays are values: the same ops return new arrays and writes never propagate
between them.
"""
from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from .._C import ShapeError
from .. import _C
from .._creation import arange, full, tensor, zeros
from .._tensor import Tensor
from ..autograd import Function
from . import indexing  # narrow, select, flip, pad slice through it; it pads (calls at run time only)
from .common import index_tensor, is_tensor, quantized_input, sum_to_shape, wrap, wrap_dim
from .copy import clone
from .elementwise import ge, le, sub, where
from .inplace import _alias, _check_input, _records

__all__ = ["reshape", "view", "squeeze", "unsqueeze", "flatten", "unflatten", "transpose", "swapaxes", "t",
           "permute", "movedim", "moveaxis", "expand", "expand_as", "broadcast_to", "view_as", "reshape_as", "cat",
           "concat", "concatenate", "stack", "split", "chunk", "unbind", "narrow", "select", "repeat", "tile", "roll",
           "pad", "flip"]
TENSOR_METHODS = ["reshape", "view", "squeeze", "unsqueeze", "flatten", "unflatten", "transpose", "swapaxes", "t",
                  "permute", "movedim", "moveaxis", "expand", "expand_as", "broadcast_to", "view_as", "reshape_as",
                  "split", "chunk", "unbind", "narrow", "select", "repeat", "tile", "roll", "flip"]


def _int(v, fn: str, argument: str) -> int:
    if is_tensor(v):
        v = v.__index__()
    if not isinstance(v, (numbers.Integral, np.integer)) or isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{argument}' must be an int, got {type(v).__name__}")
    return builtins.int(v)


def _sizes(args, fn: str, argument: str = "shape") -> list:
    """``f(x, 2, 3)`` and ``f(x, (2, 3))`` both give [2, 3]."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return [_int(a, fn, argument) for a in args]


def _check_tensor(x, fn: str, argument: str = "input"):
    if not is_tensor(x):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


# ----- reshaping ------------------------------------------------------------

class _Reshape(Function):
    @staticmethod
    def forward(ctx, x, shape, must_view):
        ctx.in_shape = x.shape
        return wrap((_C.view if must_view else _C.reshape)(x._impl, shape))

    @staticmethod
    def backward(ctx, g):
        return reshape(g, ctx.in_shape), None, None


# reshape / view run and record in C++ (csrc/autograd/shape.h), as permute and expand
# (registered below); these Functions are their nodes' `function`, for create_graph.
_autograd_reshape = _C.autograd_reshape


def reshape(input, *shape):
    """Same elements in a new shape (row-major order); one size may be -1.

    CPU stream: a view sharing memory when the strides allow, a copy
    otherwise. GPU stream: a new array.
    Raises ValueError when the element counts differ.

    >>> import lucid
    >>> lucid.arange(6).reshape(2, -1).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    if isinstance(input, Tensor):
        # Fast path: a shape of plain ints (or one tuple / list of them), read once.
        sizes = list(shape[0]) if len(shape) == 1 and type(shape[0]) in (tuple, list) else list(shape)
        for v in sizes:
            if type(v) is not int:
                sizes = _sizes(shape, "reshape")
                break
    else:
        if quantized_input(input):
            return input.reshape(*shape)
        _check_tensor(input, "reshape")
        sizes = _sizes(shape, "reshape")
    if tuple(sizes) == input.shape:
        return input
    return _autograd_reshape(input, sizes, False)  # kernel and (when recording) node: one C++ call


def view(input, *shape):
    """Like :func:`reshape` but never copies on the CPU stream: ValueError when
    the input's strides cannot be viewed in ``shape`` (call ``contiguous()``).

    >>> import lucid
    >>> x = lucid.zeros(2, 3)
    >>> v = x.view(6)
    >>> v[0] = 5.0  # writes through to x on the CPU stream
    >>> x[0, 0].item()
    5.0
    """
    _check_tensor(input, "view")
    return _autograd_reshape(input, _sizes(shape, "view"), True)


def view_as(input, other):
    """``input.view(other.shape)``."""
    return view(input, other.shape)


def reshape_as(input, other):
    """``input.reshape(other.shape)``."""
    return reshape(input, other.shape)


def squeeze(input, dim=None):
    """Removes axes of size 1: all of them, or those in ``dim`` (int or tuple);
    a named axis whose size is not 1 is left alone (as in PyTorch).
    CPU stream: a view sharing memory; GPU stream: a new array.

    >>> import lucid
    >>> lucid.zeros(1, 3, 1).squeeze().shape
    (3,)
    """
    return _C.autograd_squeeze(input, dim)  # checks, the view and (when recording) ReshapeBackward: one C++ call


def unsqueeze(input, dim):
    """Inserts an axis of size 1 at ``dim`` (in ``[-ndim-1, ndim]``).
    CPU stream: a view sharing memory; GPU stream: a new array.

    >>> import lucid
    >>> lucid.zeros(3).unsqueeze(-1).shape
    (3, 1)
    """
    return _C.autograd_unsqueeze(input, dim)  # checks, the view and (when recording) ReshapeBackward: one C++ call


def flatten(input, start_dim=0, end_dim=-1):
    """Merges axes ``start_dim..end_dim`` into one; a 0-d input becomes 1-d.

    >>> import lucid
    >>> lucid.zeros(2, 3, 4).flatten(1).shape
    (2, 12)
    """
    if quantized_input(input):
        return input.flatten(start_dim, end_dim)
    _check_tensor(input, "flatten")
    if input.ndim == 0:
        return _autograd_reshape(input, [1], False)
    s = wrap_dim(start_dim, input.ndim, "flatten", "start_dim")
    e = wrap_dim(end_dim, input.ndim, "flatten", "end_dim")
    if s > e:
        raise ValueError(f"flatten(): argument 'start_dim' ({start_dim}) must not come after 'end_dim' ({end_dim})")
    if s == e:
        return input
    shape = list(input.shape)
    return _autograd_reshape(input, shape[:s] + [math.prod(shape[s:e + 1])] + shape[e + 1:], False)


def unflatten(input, dim, sizes):
    """Splits axis ``dim`` into ``sizes`` (one may be -1).

    >>> import lucid
    >>> lucid.zeros(2, 12).unflatten(1, (3, 4)).shape
    (2, 3, 4)
    """
    _check_tensor(input, "unflatten")
    d = wrap_dim(dim, input.ndim, "unflatten")
    sizes = _sizes((sizes,), "unflatten", "sizes")
    known = int(np.prod([s for s in sizes if s != -1]))
    if sizes.count(-1) == 1 and known:
        sizes[sizes.index(-1)] = input.shape[d] // known
    if int(np.prod(sizes)) != input.shape[d] or sizes.count(-1):
        raise ShapeError(f"unflatten(): sizes {tuple(sizes)} do not multiply to axis {d}'s size {input.shape[d]}")
    shape = list(input.shape)
    return reshape(input, shape[:d] + sizes + shape[d + 1:])


# ----- axis order -----------------------------------------------------------

class _Permute(Function):
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return _C.permute(x._impl, dims)

    @staticmethod
    def backward(ctx, g):
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return permute(g, inverse), None


def permute(input, *dims):
    """Reorders axes: output axis ``i`` is input axis ``dims[i]``.
    CPU stream: a view sharing memory; GPU stream: a new array.

    >>> import lucid
    >>> lucid.zeros(2, 3, 4).permute(2, 0, 1).shape
    (4, 2, 3)
    """
    _check_tensor(input, "permute")
    ds = _sizes(dims, "permute", "dims")
    if len(ds) != input.ndim:
        raise ValueError(f"permute(): argument 'dims' must name each of the input's {input.ndim} axes once, "
                         f"got {tuple(ds)}")
    ds = [wrap_dim(d, input.ndim, "permute", "dims") for d in ds]
    if len(set(ds)) != len(ds):
        raise ValueError(f"permute(): argument 'dims' repeats an axis: {tuple(dims)}")
    if ds == list(range(input.ndim)):
        return input
    return _autograd_permute(input, ds)  # the view and (when recording) its node: one C++ call


def transpose(input, dim0, dim1):
    """Swaps two axes. CPU stream: a view sharing memory; GPU stream: a new array.

    >>> import lucid
    >>> lucid.tensor([[1, 2, 3]]).transpose(0, 1).tolist()
    [[1], [2], [3]]
    """
    _check_tensor(input, "transpose")
    if input.ndim == 0:
        wrap_dim(dim0, 0, "transpose", "dim0")
        wrap_dim(dim1, 0, "transpose", "dim1")
        return input
    a = wrap_dim(dim0, input.ndim, "transpose", "dim0")
    b = wrap_dim(dim1, input.ndim, "transpose", "dim1")
    if a == b:
        return input
    order = list(range(input.ndim))
    order[a], order[b] = order[b], order[a]
    return _autograd_permute(input, order)  # a valid order by construction: no second check


swapaxes = transpose


def t(input):
    """Transposes a matrix; 0-d and 1-d tensors come back unchanged (PyTorch's ``t``).

    >>> import lucid
    >>> lucid.tensor([[1, 2]]).t().tolist()
    [[1], [2]]
    """
    _check_tensor(input, "t")
    if input.ndim > 2:
        raise ValueError(f"t(): expects a tensor with at most 2 dims, got {input.ndim}; use transpose() or mT")
    return _autograd_permute(input, [1, 0]) if input.ndim == 2 else input


def movedim(input, source, destination):
    """Moves axis ``source`` to position ``destination`` (ints), keeping the others' order.

    >>> import lucid
    >>> lucid.zeros(2, 3, 4).movedim(0, -1).shape
    (3, 4, 2)
    """
    _check_tensor(input, "movedim")
    s = wrap_dim(source, input.ndim, "movedim", "source")
    d = wrap_dim(destination, input.ndim, "movedim", "destination")
    order = [i for i in range(input.ndim) if i != s]
    order.insert(d, s)
    return permute(input, order)


moveaxis = movedim


# ----- broadcasting ---------------------------------------------------------

class _Expand(Function):
    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return _C.expand(x._impl, shape)

    @staticmethod
    def backward(ctx, g):
        return sum_to_shape(g, ctx.in_shape), None


def expand(input, *sizes):
    """Broadcasts size-1 axes (and new leading axes) to ``sizes``; -1 keeps an axis.

    CPU stream: a view with stride 0 on the broadcast axes (its elements
    alias each other, so do not write through it). Gradient: summed back.

    >>> import lucid
    >>> lucid.tensor([[1], [2]]).expand(2, 3).tolist()
    [[1, 1, 1], [2, 2, 2]]
    """
    _check_tensor(input, "expand")
    s = _sizes(sizes, "expand", "size")
    if tuple(s) == input.shape:
        return input
    return _autograd_expand(input, s)


def broadcast_to(input, shape):
    """numpy's name for :func:`expand` (``shape`` must not contain -1 on new axes)."""
    return expand(input, shape)


def expand_as(input, other):
    """``input.expand(other.shape)``."""
    return expand(input, other.shape)


_autograd_permute, _autograd_expand = _C.autograd_permute, _C.autograd_expand


# ----- joining and splitting -------------------------------------------------

# cat and stack run and record in C++ (`_C.autograd_cat` / `_C.autograd_stack`,
# csrc/autograd/shape.cpp: CatBackward / StackBackward, whose first-order
# formula is there). These Functions are their formulas under create_graph;
# the node is their ctx (`ctx.dim`, `ctx.sizes`, `ctx.in_shape`), and input 0
# is the axis argument.
class _Cat(Function):
    @staticmethod
    def backward(ctx, g):
        return (None,) + tuple(split(g, ctx.sizes, ctx.dim))


class _Stack(Function):
    @staticmethod
    def backward(ctx, g):
        return (None,) + tuple(reshape(p, ctx.in_shape) for p in split(g, 1, ctx.dim))


_C._register_shape(_Reshape, _Permute, _Expand, _Cat, _Stack)


def cat(tensors, dim=0):
    """Joins tensors along an existing axis ``dim``. All must share dtype,
    device and every other axis's size (ValueError naming the item otherwise).

    >>> import lucid
    >>> lucid.cat([lucid.tensor([1, 2]), lucid.tensor([3])]).tolist()
    [1, 2, 3]
    """
    return _C.autograd_cat(tensors, dim)  # checks, the kernel and (when recording) CatBackward: one C++ call


concat = concatenate = cat


def stack(tensors, dim=0):
    """Joins same-shaped tensors along a new axis ``dim`` (in ``[-ndim-1, ndim]``).

    >>> import lucid
    >>> lucid.stack([lucid.tensor([1, 2]), lucid.tensor([3, 4])], dim=1).tolist()
    [[1, 3], [2, 4]]
    """
    return _C.autograd_stack(tensors, dim)  # checks, the kernel and (when recording) StackBackward: one C++ call


def split(input, split_size_or_sections, dim=0):
    """Splits along ``dim`` into pieces of ``split_size`` (the last may be
    smaller) or of the listed sizes (which must add up to the axis size).
    Each piece is a view on the CPU stream and a new array on the GPU stream.

    >>> import lucid
    >>> [p.tolist() for p in lucid.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    >>> [p.tolist() for p in lucid.arange(5).split([1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    _check_tensor(input, "split")
    if input.ndim == 0:
        raise ValueError("split(): cannot split a 0-d tensor")
    d = wrap_dim(dim, input.ndim, "split")
    n = input.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [_int(s, "split", "split_size_or_sections") for s in split_size_or_sections]
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise ValueError(f"split(): argument 'split_size_or_sections' {tuple(sizes)} must be non-negative and "
                             f"add up to axis {d}'s size {n}")
    else:
        size = _int(split_size_or_sections, "split", "split_size_or_sections")
        if size <= 0 and not (size == 0 and n == 0):
            raise ValueError(f"split(): argument 'split_size_or_sections' must be positive, got {size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if n else [0]
    return _pieces(input, sizes, d)


def _pieces(input, sizes, d):
    out, start = [], 0
    for s in sizes:
        out.append(indexing.getitem(input, (slice(None),) * d + (slice(start, start + s),)))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    """Splits into ``chunks`` pieces of ``ceil(size / chunks)`` (fewer pieces
    when the axis is short, as in PyTorch).

    >>> import lucid
    >>> [p.tolist() for p in lucid.arange(5).chunk(2)]
    [[0, 1, 2], [3, 4]]
    """
    _check_tensor(input, "chunk")
    c = _int(chunks, "chunk", "chunks")
    if c <= 0:
        raise ValueError(f"chunk(): argument 'chunks' must be positive, got {c}")
    if input.ndim == 0:
        raise ValueError("chunk(): cannot split a 0-d tensor")
    d = wrap_dim(dim, input.ndim, "chunk")
    n = input.shape[d]
    size = -(-n // c)
    return split(input, size if size else 1, d) if n else _pieces(input, [0], d)


def unbind(input, dim=0):
    """The slices along ``dim`` as a tuple, each without that axis.

    >>> import lucid
    >>> [t.tolist() for t in lucid.tensor([[1, 2], [3, 4]]).unbind(1)]
    [[1, 3], [2, 4]]
    """
    _check_tensor(input, "unbind")
    d = wrap_dim(dim, input.ndim, "unbind")
    return tuple(indexing.getitem(input, (slice(None),) * d + (i,)) for i in range(input.shape[d]))


def narrow(input, dim, start, length):
    """``input`` restricted to ``start .. start + length - 1`` along ``dim``
    (``start`` may be negative). CPU stream: a view; GPU stream: a new array.

    >>> import lucid
    >>> lucid.arange(6).narrow(0, 1, 3).tolist()
    [1, 2, 3]
    """
    _check_tensor(input, "narrow")
    d = wrap_dim(dim, input.ndim, "narrow")
    n = input.shape[d]
    s, k = _int(start, "narrow", "start"), _int(length, "narrow", "length")
    if not -n <= s <= n:
        raise IndexError(f"narrow(): argument 'start' {s} is out of range for dim {d} with size {n}")
    s %= n if n else 1
    if k < 0 or s + k > n:
        raise ValueError(f"narrow(): start {s} + length {k} exceeds dim {d} of size {n}")
    return indexing.getitem(input, (slice(None),) * d + (slice(s, s + k),))


def select(input, dim, index):
    """``input[..., index, ...]`` with ``index`` on axis ``dim`` (the axis is
    removed). CPU stream: a view; GPU stream: a new array.

    >>> import lucid
    >>> lucid.tensor([[1, 2], [3, 4]]).select(1, -1).tolist()
    [2, 4]
    """
    _check_tensor(input, "select")
    d = wrap_dim(dim, input.ndim, "select")
    return indexing.getitem(input, (slice(None),) * d + (_int(index, "select", "index"),))


def repeat(input, *sizes):
    """Tiles ``input`` ``sizes[i]`` times along each axis (PyTorch's ``repeat``:
    ``len(sizes) >= ndim``; extra sizes add leading axes). Always a copy.

    >>> import lucid
    >>> lucid.tensor([1, 2]).repeat(2, 2).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    _check_tensor(input, "repeat")
    reps = _sizes(sizes, "repeat", "sizes")
    if len(reps) < input.ndim:
        raise ValueError(f"repeat(): argument 'sizes' has {len(reps)} entries, fewer than the input's {input.ndim} dims")
    if any(r < 0 for r in reps):
        raise ValueError(f"repeat(): argument 'sizes' must be non-negative, got {tuple(reps)}")
    shape = [1] * (len(reps) - input.ndim) + list(input.shape)
    # (s0, s1) -> (1, s0, 1, s1) -> (r0, s0, r1, s1) -> (r0*s0, r1*s1)
    spread = [v for s in shape for v in (1, s)]
    target = [v for r, s in zip(reps, shape) for v in (r, s)]
    out = clone(expand(reshape(input, spread), target))  # a fresh contiguous copy, so the reshape is a view
    return reshape(out, [r * s for r, s in zip(reps, shape)])


def tile(input, dims):
    """numpy's tile: like :func:`repeat`, but fewer ``dims`` than axes repeat the trailing axes.

    >>> import lucid
    >>> lucid.tensor([[1, 2]]).tile((2,)).tolist()
    [[1, 2, 1, 2]]
    """
    _check_tensor(input, "tile")
    reps = _sizes((dims,), "tile", "dims")
    return repeat(input, [1] * (input.ndim - len(reps)) + reps)


def roll(input, shifts, dims=None):
    """Rotates elements by ``shifts`` along ``dims`` (ints or tuples of equal
    length); with ``dims=None`` the tensor is flattened, rolled and reshaped.

    >>> import lucid
    >>> lucid.tensor([[1, 2, 3], [4, 5, 6]]).roll(1, 1).tolist()
    [[3, 1, 2], [6, 4, 5]]
    """
    _check_tensor(input, "roll")
    if dims is None:
        if isinstance(shifts, (tuple, list)) and len(shifts) != 1:
            raise ValueError("roll(): with dims=None, argument 'shifts' must be a single int")
        flat = reshape(input, [-1])
        return reshape(roll(flat, shifts if not isinstance(shifts, (tuple, list)) else shifts[0], 0), input.shape)
    ss = list(shifts) if isinstance(shifts, (tuple, list)) else [shifts]
    ds = list(dims) if isinstance(dims, (tuple, list)) else [dims]
    if len(ss) != len(ds):
        raise ValueError(f"roll(): arguments 'shifts' {tuple(ss)} and 'dims' {tuple(ds)} differ in length")
    out = input
    for sh, dm in zip(ss, ds):
        d = wrap_dim(dm, input.ndim, "roll", "dims")
        n = input.shape[d] if input.ndim else 1
        k = _int(sh, "roll", "shifts") % n if n else 0
        if k:
            head = narrow(out, d, n - k, k)
            tail = narrow(out, d, 0, n - k)
            out = cat([head, tail], d)
    return out


# ----- padding and flipping ---------------------------------------------------

def flip(input, dims):
    """Reverses the order of elements along ``dims`` (int or tuple). A copy on both streams.

    >>> import lucid
    >>> lucid.tensor([[1, 2], [3, 4]]).flip(1).tolist()
    [[2, 1], [4, 3]]
    """
    _check_tensor(input, "flip")
    ds = dims if isinstance(dims, (tuple, list)) else (dims,)
    ds = {wrap_dim(d, input.ndim, "flip", "dims") for d in ds}
    if input.ndim == 0:
        return indexing.getitem(input, ())
    return indexing.getitem(input, tuple(slice(None, None, -1) if i in ds else slice(None) for i in range(input.ndim)))


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=0):
    """Pads the last ``len(pad) // 2`` axes, PyTorch's order: ``pad = (left of
    the last axis, right of the last axis, left of the one before, ...)``.
    Negative amounts crop (constant mode). Modes: ``"constant"`` (fill with
    ``value``), ``"reflect"`` (mirror without the edge; amount < size),
    ``"replicate"`` (repeat the edge), ``"circular"`` (wrap; amount <= size).
    Differentiable in ``input``.

    >>> import lucid
    >>> lucid.pad(lucid.tensor([[1, 2]]), (1, 2), value=9).tolist()
    [[9, 1, 2, 9, 9]]
    >>> lucid.pad(lucid.tensor([1.0, 2.0, 3.0]), (2, 1), mode="reflect").tolist()
    [3.0, 2.0, 1.0, 2.0, 3.0, 2.0]
    """
    _check_tensor(input, "pad")
    if not isinstance(pad, (tuple, list)) or len(pad) % 2:
        raise ValueError(f"pad(): argument 'pad' must be a tuple of even length, got {pad!r}")
    amounts = [_int(p, "pad", "pad") for p in pad]
    if len(amounts) // 2 > input.ndim:
        raise ValueError(f"pad(): argument 'pad' of length {len(amounts)} pads more axes than the input's {input.ndim}")
    if mode not in _PAD_MODES:
        raise ValueError(f"pad(): argument 'mode' must be one of {_PAD_MODES}, got {mode!r}")
    # (axis, before, after), last axis first as given.
    spec = [(input.ndim - 1 - i, amounts[2 * i], amounts[2 * i + 1]) for i in range(len(amounts) // 2)]
    if mode == "constant":
        shape = list(input.shape)
        src = [slice(None)] * input.ndim
        dst = [slice(None)] * input.ndim
        for ax, lo, hi in spec:
            n = input.shape[ax]
            shape[ax] = n + lo + hi
            if shape[ax] < 0:
                raise ValueError(f"pad(): padding {(lo, hi)} leaves axis {ax} of size {n} with a negative size")
            src[ax] = slice(max(-lo, 0), n - max(-hi, 0))
            dst[ax] = slice(max(lo, 0), max(lo, 0) + max(n - max(-lo, 0) - max(-hi, 0), 0))
        out = full(shape, value, dtype=input.dtype, device=input.device)
        return indexing.setitem(out, tuple(dst), indexing.getitem(input, tuple(src)))
    out = input
    for ax, lo, hi in spec:
        n = out.shape[ax]
        if lo < 0 or hi < 0:
            raise ValueError(f"pad(): negative padding is only supported in constant mode, got {(lo, hi)}")
        if n == 0 and (lo or hi):
            raise ValueError(f"pad(): mode '{mode}' cannot pad axis {ax} of size 0")
        if mode == "reflect" and max(lo, hi) >= n:
            raise ValueError(f"pad(): reflect padding {(lo, hi)} must be smaller than axis {ax}'s size {n}")
        if mode == "circular" and max(lo, hi) > n:
            raise ValueError(f"pad(): circular padding {(lo, hi)} must not exceed axis {ax}'s size {n}")
        pos = np.arange(-lo, n + hi)
        if mode == "reflect":
            period = 2 * (n - 1) if n > 1 else 1
            pos = np.abs(pos) % period
            pos = np.where(pos >= n, period - pos, pos)
        elif mode == "replicate":
            pos = np.clip(pos, 0, n - 1)
        else:
            pos = pos % n
        out = indexing.index_select(out, ax, tensor(pos.astype(np.int64), device=input.device))
    return out


# ----- triangles (a mask from two aranges, then where) ---------------------------------

def _triangle(input, diagonal, fn, lower):
    _check_tensor(input, fn)
    if input.ndim < 2:
        raise ValueError(f"{fn}(): expected a tensor of at least 2 dimensions, got shape {tuple(input.shape)}")
    diagonal = _int(diagonal, fn, "diagonal")
    rows, cols = input.shape[-2], input.shape[-1]
    r = arange(rows, device=input.device).reshape(rows, 1)
    c = arange(cols, device=input.device).reshape(1, cols)
    offset = sub(c, r)  # column - row: 0 on the main diagonal
    keep = le(offset, diagonal) if lower else ge(offset, diagonal)
    return where(keep, input, zeros((), dtype=input.dtype, device=input.device))  # keeps bool masks bool


def tril(input, diagonal=0):
    """The lower triangle of the last two axes (``col - row <= diagonal``), zeros above.

    >>> import lucid
    >>> lucid.tril(lucid.ones(2, 2)).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    return _triangle(input, diagonal, "tril", True)


def triu(input, diagonal=0):
    """The upper triangle of the last two axes (``col - row >= diagonal``), zeros below.

    >>> import lucid
    >>> lucid.triu(lucid.ones(2, 2), diagonal=1).tolist()
    [[0.0, 1.0], [0.0, 0.0]]
    """
    return _triangle(input, diagonal, "triu", False)


__all__ += ["tril", "triu"]
TENSOR_METHODS += ["tril", "triu"]


# ----- numpy's spellings and rearrangements ------------------------------------------------

def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def broadcast_shapes(*shapes):
    """numpy's broadcast of the given shapes (a tuple)."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ShapeError(f"broadcast_shapes(): shapes {list(shapes)} cannot be broadcast together") from None


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (a tuple); differentiable."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _check_tensor(t, "broadcast_tensors", "tensors")
    try:
        shape = tuple(np.broadcast_shapes(*[t.shape for t in tensors]))
    except ValueError:
        raise ShapeError(f"broadcast_tensors(): shapes {[t.shape for t in tensors]} cannot be broadcast "
                         "together") from None
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    """Repeats each element ``repeats`` times along ``dim`` (flattened when
    None). ``repeats``: an int or a 1-d integer tensor with one count per
    element (read back to the host). Differentiable in ``input``.

    >>> import lucid
    >>> lucid.repeat_interleave(lucid.tensor([1, 2]), 2).tolist()
    [1, 1, 2, 2]
    """
    _check_tensor(input, "repeat_interleave")
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
    return indexing.index_select(x, d, index_tensor(np.repeat(np.arange(n), counts), x.device))


def ravel(input):
    """The elements as a 1-D tensor (row-major)."""
    _check_tensor(input, "ravel")
    return input.reshape(-1)


def swapdims(input, dim0, dim1):
    """Alias of transpose / swapaxes."""
    _check_tensor(input, "swapdims")
    return input.transpose(dim0, dim1)


def rot90(input, k=1, dims=(0, 1)):
    """Rotates by 90 degrees ``k`` times in the plane ``dims``, from the first axis toward the
    second (numpy's and PyTorch's direction)."""
    _check_tensor(input, "rot90")
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
    _check_tensor(input, "fliplr")
    if input.ndim < 2:
        raise ValueError(f"fliplr(): input must be >= 2-d, got {input.ndim}-d")
    return input.flip(1)


def flipud(input):
    """Reverses dim 0 (at least 1-D)."""
    _check_tensor(input, "flipud")
    if input.ndim < 1:
        raise ValueError("flipud(): input must be >= 1-d, got 0-d")
    return input.flip(0)


def numel(input):
    """The number of elements (an int)."""
    _check_tensor(input, "numel")
    return input.numel()


_SPELLINGS = ["broadcast_shapes", "broadcast_tensors", "repeat_interleave", "ravel", "swapdims", "rot90", "fliplr",
              "flipud", "numel"]
__all__ += _SPELLINGS
TENSOR_METHODS += ["repeat_interleave", "ravel", "swapdims", "rot90", "fliplr", "flipud"]


# ----- in-place forms ----------------------------------------------------------------------
# ``x.squeeze_()`` ... change which view the tensor is (no bytes move, as in PyTorch): the
# tensor is rebound to the squeezed / transposed view, recorded when the graph is on. A leaf
# that requires grad is refused while grad mode is on, as PyTorch.

def _rebind(input, view):
    input._impl = view._impl
    input.grad_fn, input._output_nr, input._requires_grad = view.grad_fn, view._output_nr, view._requires_grad
    return input


def _shape_inplace(name, fn):
    def op(input, *args):
        _check_input(name, input)
        if _records(input):
            if input.grad_fn is None:
                raise RuntimeError(f"{name}(): a leaf tensor that requires grad cannot be modified in place; "
                                   "use lucid.no_grad() or the out-of-place form")
            return _rebind(input, fn(_alias(input), *args))
        return _rebind(input, fn(input, *args))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"In-place :func:`lucid.{name[:-1]}`: ``input`` becomes that view of itself (same memory on the "
                  "CPU stream) and is returned.")
    return op


squeeze_ = _shape_inplace("squeeze_", squeeze)
unsqueeze_ = _shape_inplace("unsqueeze_", unsqueeze)
t_ = _shape_inplace("t_", t)
transpose_ = _shape_inplace("transpose_", transpose)


_INPLACE = ["squeeze_", "unsqueeze_", "t_", "transpose_"]
__all__ += _INPLACE
TENSOR_METHODS += _INPLACE
