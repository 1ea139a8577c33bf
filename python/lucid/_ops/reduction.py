"""Reductions (csrc/ops/reduction.cpp) with their gradients.

Every reduction takes PyTorch's ``dim=`` (int, tuple or None for all axes)
and ``keepdim=``, or numpy's ``axis=``. An empty tuple reduces no axis (as
numpy does; PyTorch's ``sum(dim=())`` reduces all of them). Dtype rules: ``sum``/``prod`` of
integers or bool give int64; float16/bfloat16 accumulate in float32 and
round once; ``mean``/``var`` of integers or bool give float32 (lucid has no
float64). ``max``/``min``/``amax``/``amin`` propagate NaN. Empty reductions:
sum 0, prod 1, mean/var nan, all True, any False; max/min/argmax over an
empty dim raise ValueError.

Gradients: ``amax``/``amin`` and ``max``/``min`` without a dim split the
gradient equally among tied extremes; ``max``/``min`` with a dim send it to
the returned index only (the first extreme). ``prod``'s gradient is the
product of the other elements, exact when some elements are zero.
"""
from __future__ import annotations

import builtins
import collections

import numpy as np

from .. import _C
from .._creation import ones
from .._dtype import as_dtype
from ..autograd import Function, is_grad_enabled
from .common import dims_arg, is_tensor, values_indices, wrap, wrap_dim
from .elementwise import add, exp, isinf, log, maximum, minimum, sqrt, sub, where
from .indexing import scatter_add
from .scan import cumprod
from .shape import cat, expand, flip, unsqueeze

__all__ = ["sum", "mean", "var", "prod", "max", "min", "amax", "amin", "aminmax", "argmax", "argmin", "all", "any",
           "histc"]
TENSOR_METHODS = list(__all__)

min_max = collections.namedtuple("min_max", ["min", "max"])
min_max.__doc__ = "The (min, max) result of aminmax."


def _reduced_count(shape, dims) -> int:
    n = 1
    for d in range(len(shape)) if dims is None else dims:
        n *= shape[d]
    return n


def _dtype_name(dtype):
    if dtype is None:
        return None
    return as_dtype(dtype).name


def _keep_shape(shape, dims):
    """``shape`` with the reduced axes (all of them when ``dims`` is empty) set to 1."""
    n = len(shape)
    axes = {d % n for d in dims} if dims and n else set(range(n))  # a 0-d input's axis 0 reduces nothing
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _unreduce(g, shape, dims):
    """g (the reduced shape) broadcast back to the input's shape; recorded (a
    reshape and an expand) when g is part of a graph (create_graph)."""
    if g._requires_grad and is_grad_enabled():
        return expand(g.reshape(_keep_shape(shape, dims)), *shape)
    return _C.broadcast_reduced(g._impl, tuple(shape), dims)


class _Sum(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.in_dtype = x.shape, dims, x.dtype
        return _C.sum(x._impl, dims, keepdim, dtype)

    @staticmethod
    def backward(ctx, g):
        gx = _unreduce(g, ctx.shape, ctx.dims)
        return (gx if gx.dtype == ctx.in_dtype else gx.to(ctx.in_dtype)), None, None, None


class _Mean(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim):
        ctx.shape, ctx.dims = x.shape, dims
        return _C.mean(x._impl, dims, keepdim)

    @staticmethod
    def backward(ctx, g):
        n = _reduced_count(ctx.shape, ctx.dims)
        return _unreduce(g, ctx.shape, ctx.dims) / builtins.max(n, 1), None, None


# sum and mean run and record in C++ (csrc/autograd/reduction.h, first-order formulas
# against ops::); these Functions are their nodes' `function`, for create_graph.
_C._register_reduction(_Sum, _Mean)
_autograd_sum, _autograd_mean = _C.autograd_sum, _C.autograd_mean


class _Var(Function):
    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        ctx.save_for_backward(x)
        ctx.dims, ctx.correction = dims, correction
        return _C.var(x._impl, dims, correction, keepdim)

    @staticmethod
    def backward(ctx, g):
        # d var / d x_i = 2 (x_i - mean) / (n - correction)
        (x,) = ctx.saved_tensors
        denom = _reduced_count(x.shape, ctx.dims) - ctx.correction
        scale = 2.0 / denom if denom > 0 else float("nan")
        if is_grad_enabled():  # create_graph: the mean's dependence on x is recorded too
            centered = x - mean(x, dim=ctx.dims, keepdim=True)
        else:
            centered = x - _C.mean(x._impl, ctx.dims, True)
        return _unreduce(g, x.shape, ctx.dims) * centered * scale, None, None, None


def _prod_of_others_recorded(x, dims):
    """``_C.prod_of_others`` (the product over the reduced axes of every element but
    x_i, exact with zeros) as recorded ops, for create_graph: the reduced axes moved
    last and flattened, then the exclusive cumulative products from both ends,
    multiplied."""
    n = x.ndim
    axes = sorted({d % n for d in dims}) if dims else list(range(n))
    kept = [i for i in range(n) if i not in axes]
    m = 1
    for a in axes:
        m *= x.shape[a]
    if m <= 1:
        return ones(x.shape, dtype=x.dtype, device=x.device)
    xp = x.permute(kept + axes)
    lead = tuple(x.shape[i] for i in kept)
    flat = xp.reshape(lead + (m,))
    one = ones(lead + (1,), dtype=x.dtype, device=x.device)
    left = cat([one, cumprod(flat[..., :-1], -1)], -1)  # x_0 ... x_{i-1}
    right = flip(cat([one, cumprod(flip(flat, [-1])[..., :-1], -1)], -1), [-1])  # x_{i+1} ... x_{m-1}
    inverse = [0] * n
    for pos, axis in enumerate(kept + axes):
        inverse[axis] = pos
    return (left * right).reshape(xp.shape).permute(inverse)


class _Prod(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.save_for_backward(x)
        ctx.dims = dims
        return _C.prod(x._impl, dims, keepdim, dtype)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        if is_grad_enabled():  # create_graph: recorded, so others' dependence on x is kept
            others = _prod_of_others_recorded(x, ctx.dims)
        else:
            others = _C.prod_of_others(x._impl, ctx.dims)
        gx = _unreduce(g, x.shape, ctx.dims)
        if gx.dtype != x.dtype:
            gx = gx.to(x.dtype)
        return gx * others, None, None, None


class _Extreme(Function):
    """amax / amin (and max / min without a dim): ties share the gradient equally."""

    @classmethod
    def node_name(cls, ctx):
        return "AmaxBackward" if ctx.is_max else "AminBackward"

    @staticmethod
    def forward(ctx, x, dims, keepdim, is_max):
        out = wrap((_C.amax if is_max else _C.amin)(x._impl, dims, keepdim))
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.is_max = dims, is_max
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        mask = _C.equal_mask(x._impl, out._impl, ctx.dims)
        count = _C.sum(mask._impl, ctx.dims, True, None)
        return _unreduce(g, x.shape, ctx.dims) * mask / count, None, None, None


class _ExtremeDim(Function):
    """max / min with a dim: the gradient goes to the returned index."""

    @classmethod
    def node_name(cls, ctx):
        return "MaxBackward" if ctx.is_max else "MinBackward"

    @staticmethod
    def forward(ctx, x, dim, keepdim, is_max):
        values, indices = (_C.max_dim if is_max else _C.min_dim)(x._impl, dim, keepdim)
        values, indices = wrap(values), wrap(indices)
        ctx.save_for_backward(indices)
        ctx.shape, ctx.dim, ctx.params, ctx.is_max = x.shape, dim, (int(keepdim),), is_max
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, g_values, g_indices):
        if g_values is None:
            return None, None, None, None
        (indices,) = ctx.saved_tensors
        if g_values._requires_grad and is_grad_enabled():  # create_graph: recorded scatter_add
            if not ctx.shape:  # a 0-d input is its own max
                return g_values, None, None, None
            if not ctx.params[0]:  # keepdim
                g_values, indices = unsqueeze(g_values, ctx.dim), unsqueeze(indices, ctx.dim)
            zeros = _C.full(tuple(ctx.shape), 0.0, g_values.dtype.name, g_values._device_name)
            return scatter_add(zeros, ctx.dim, indices, g_values), None, None, None
        return (_C.scatter_along(g_values._impl, indices._impl, tuple(ctx.shape), ctx.dim, bool(ctx.params[0])),
                None, None, None)


# var, prod, amax / amin and max / min (with or without a dim) run and record in C++
# as well (csrc/autograd/reduction.h); these Functions serve create_graph.
_C._register_reduction_more(_Var, _Prod, _Extreme, _ExtremeDim)
_autograd_var, _autograd_prod = _C.autograd_var, _C.autograd_prod
_autograd_amax, _autograd_amin = _C.autograd_amax, _C.autograd_amin
_autograd_max_dim, _autograd_min_dim = _C.autograd_max_dim, _C.autograd_min_dim


def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None):  # noqa: A001
    """Sum of the elements over ``dim`` (all axes when None).

    Integers and bool sum to int64; float16/bfloat16 accumulate in float32
    and round once. ``dtype`` casts the input first (PyTorch). An empty
    reduction gives 0. Raises IndexError for a ``dim`` out of range.

    >>> import lucid
    >>> x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> lucid.sum(x).item(), x.sum(dim=0).tolist(), x.sum(1, keepdim=True).tolist()
    (10.0, [4.0, 6.0], [[3.0], [7.0]])
    """
    dims = None if dim is None and axis is None else dims_arg(dim, axis, input.ndim, "sum")
    return _autograd_sum(input, dims, bool(keepdim), _dtype_name(dtype))  # kernel and node: one C++ call


def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Arithmetic mean over ``dim``; integer inputs give float32 (an empty reduction gives nan).

    >>> import lucid
    >>> lucid.mean(lucid.tensor([[1.0, 2.0], [3.0, 5.0]]), dim=1).tolist()
    [1.5, 4.0]
    """
    dims = dims_arg(dim, axis, input.ndim, "mean")
    if dtype is not None:
        input = input.to(dtype)
    return _autograd_mean(input, dims, bool(keepdim))


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """Variance ``sum((x - mean)^2) / max(n - correction, 0)`` over ``dim``.

    ``correction`` defaults to 1 (Bessel's correction); ``unbiased=False``
    means ``correction=0``. Integer inputs give float32. Computed in float32
    with two passes (mean first), so large offsets do not cancel.

    >>> import lucid
    >>> lucid.var(lucid.tensor([1.0, 2.0, 3.0, 4.0])).item()
    1.6666666269302368
    >>> lucid.var(lucid.tensor([1.0, 2.0, 3.0, 4.0]), correction=0).item()
    1.25
    """
    if isinstance(dim, builtins.bool) and unbiased is None:  # var(x, False): PyTorch's (input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError("var(): pass 'unbiased' or 'correction', not both")
    corr = correction if correction is not None else (1 if unbiased is None or unbiased else 0)
    dims = dims_arg(dim, axis, input.ndim, "var")
    return _autograd_var(input, dims, float(corr), bool(keepdim))


def prod(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Product of the elements over ``dim``; integers and bool give int64 (wrapping), empty gives 1.

    >>> import lucid
    >>> lucid.prod(lucid.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=0).tolist()
    [3.0, 8.0]
    """
    dims = dims_arg(dim, axis, input.ndim, "prod")
    return _autograd_prod(input, dims, bool(keepdim), _dtype_name(dtype))


def amax(input, dim=None, keepdim=False, *, axis=None):
    """Maximum over ``dim`` (all axes when None); NaN propagates. Ties share the gradient.

    >>> import lucid
    >>> lucid.amax(lucid.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=0).tolist()
    [3.0, 5.0]
    """
    return _autograd_amax(input, dims_arg(dim, axis, input.ndim, "amax"), bool(keepdim))


def amin(input, dim=None, keepdim=False, *, axis=None):
    """Minimum over ``dim`` (all axes when None); NaN propagates. Ties share the gradient.

    >>> import lucid
    >>> lucid.amin(lucid.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=1).tolist()
    [1.0, 2.0]
    """
    return _autograd_amin(input, dims_arg(dim, axis, input.ndim, "amin"), bool(keepdim))


def aminmax(input, *, dim=None, keepdim=False, axis=None):
    """``(min, max)`` over ``dim`` as a named tuple (fields ``min`` and ``max``).

    >>> import lucid
    >>> r = lucid.aminmax(lucid.tensor([3.0, -1.0, 2.0]))
    >>> r.min.item(), r.max.item()
    (-1.0, 3.0)
    """
    dims = dims_arg(dim, axis, input.ndim, "aminmax")
    if not (input.requires_grad and is_grad_enabled()):
        # One pass over the data (csrc/ops/reduction.cpp: aminmax) when no gradient is recorded.
        mn, mx = _C.aminmax(input._impl, dims, bool(keepdim))
        return min_max(wrap(mn), wrap(mx))
    return min_max(_autograd_amin(input, dims, bool(keepdim)), _autograd_amax(input, dims, bool(keepdim)))


def _max_min(name, is_max, input, dim, keepdim, axis):
    if is_tensor(dim):  # max(a, b): the elementwise form
        return (maximum if is_max else minimum)(input, dim)
    if dim is None and axis is None:
        return (_autograd_amax if is_max else _autograd_amin)(input, None, bool(keepdim))
    d = dim if dim is not None else axis
    if not isinstance(d, int) and not hasattr(d, "__index__"):
        raise TypeError(f"{name}(): argument 'dim' must be an int, got {type(d).__name__}")
    d = wrap_dim(d, input.ndim, name)
    return values_indices(*(_autograd_max_dim if is_max else _autograd_min_dim)(input, d, bool(keepdim)))


def max(input, dim=None, keepdim=False, *, axis=None):  # noqa: A001
    """Without ``dim``: the maximum as a 0-d tensor (NaN propagates). With an
    int ``dim``: the named tuple ``(values, indices)``, indices int64 of the
    first maximum. ``max(a, b)`` is the elementwise maximum.

    >>> import lucid
    >>> x = lucid.tensor([[1.0, 7.0], [7.0, 2.0]])
    >>> x.max().item()
    7.0
    >>> r = x.max(dim=1)
    >>> r.values.tolist(), r.indices.tolist()
    ([7.0, 7.0], [1, 0])
    """
    return _max_min("max", True, input, dim, keepdim, axis)


def min(input, dim=None, keepdim=False, *, axis=None):  # noqa: A001
    """Like :func:`max`, for the minimum.

    >>> import lucid
    >>> lucid.min(lucid.tensor([[4.0, 1.0], [0.5, 3.0]]), dim=0).indices.tolist()
    [1, 0]
    """
    return _max_min("min", False, input, dim, keepdim, axis)


def _arg(name, fn, input, dim, keepdim, axis):
    d = dim if dim is not None else axis
    if d is not None:
        d = wrap_dim(d, input.ndim, name)
    return wrap(fn(input._impl, d, bool(keepdim)))


def argmax(input, dim=None, keepdim=False, *, axis=None):
    """Index (int64) of the first maximum along ``dim``, or of the flattened
    input when ``dim`` is None. A NaN counts as the maximum (the first NaN wins).

    >>> import lucid
    >>> lucid.argmax(lucid.tensor([[1.0, 9.0], [9.0, 9.0]]), dim=1).tolist()
    [1, 0]
    """
    return _arg("argmax", _C.argmax, input, dim, keepdim, axis)


def argmin(input, dim=None, keepdim=False, *, axis=None):
    """Index (int64) of the first minimum; like :func:`argmax`.

    >>> import lucid
    >>> lucid.argmin(lucid.tensor([3.0, 1.0, 1.0])).item()
    1
    """
    return _arg("argmin", _C.argmin, input, dim, keepdim, axis)


def all(input, dim=None, keepdim=False, *, axis=None):  # noqa: A001
    """True where every element over ``dim`` is non-zero (bool; empty gives True).

    >>> import lucid
    >>> lucid.all(lucid.tensor([[1, 0], [2, 3]]), dim=1).tolist()
    [False, True]
    """
    return _C.all(input._impl, dims_arg(dim, axis, input.ndim, "all"), bool(keepdim))


def any(input, dim=None, keepdim=False, *, axis=None):  # noqa: A001
    """True where some element over ``dim`` is non-zero (bool; empty gives False).

    >>> import lucid
    >>> lucid.any(lucid.tensor([[0.0, 0.0], [0.0, 1.0]]), dim=1).tolist()
    [False, True]
    """
    return _C.any(input._impl, dims_arg(dim, axis, input.ndim, "any"), bool(keepdim))


def histc(input, bins=100, min=0, max=0):  # noqa: A002
    """Histogram of ``input`` in ``bins`` equal bins over [min, max], as ``torch.histc``:
    counts in ``input``'s dtype; elements outside the range (and NaN) are not counted;
    ``min == max`` uses the data's min and max, and a zero-width range is widened to
    [v - 1, v + 1]. The bin index is docs/numerics.md's (``Observers``), identical on
    both streams. Not differentiable.

    >>> import lucid
    >>> lucid.histc(lucid.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist()
    [0.0, 2.0, 1.0, 0.0]
    """
    if not is_tensor(input) or not input.dtype.is_floating_point:
        raise TypeError(f"histc(): argument 'input' must be a floating-point lucid.Tensor, got "
                        f"{getattr(input, 'dtype', type(input).__name__)!r}")
    lo, hi = np.float32(min), np.float32(max)
    if lo == hi and input.numel() > 0:
        lo = np.float32(amin(input.detach()).item())
        hi = np.float32(amax(input.detach()).item())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"histc(): range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise ValueError(f"histc(): argument 'max' must be larger than 'min', got min={min}, max={max}")
    if lo == hi:
        lo, hi = np.float32(lo - np.float32(1)), np.float32(hi + np.float32(1))
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise ValueError(f"histc(): argument 'bins' must be a positive int, got {bins!r}")
    counts = _C.histc(input._impl, bins, float(lo), float(hi))
    return counts.to(input.dtype)


# ----- composed from the reductions above -----------------------------------------------

def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """``sqrt(var(...))`` with var's arguments (``correction`` defaults to 1).

    >>> import lucid
    >>> lucid.std(lucid.tensor([1.0, 3.0]), correction=0).item()
    1.0
    """
    return sqrt(var(input, dim, unbiased, keepdim, correction=correction, axis=axis))


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(x)))`` over ``dim``, shifted by the max so it stays finite
    (an all ``-inf`` slice gives ``-inf``).

    >>> import lucid
    >>> round(lucid.logsumexp(lucid.tensor([1000.0, 1000.0]), dim=0).item(), 2)   # 1000 + log 2
    1000.69
    """
    m = amax(input, dim=dim, keepdim=True).detach()
    m = where(isinf(m), 0.0, m)  # -inf (empty mass) or +inf: no shift
    out = add(log(sum(exp(sub(input, m)), dim=dim, keepdim=True)), m)
    return out if keepdim else out.squeeze(dims_arg(dim, None, input.ndim, "logsumexp"))


__all__ += ["std", "logsumexp"]
TENSOR_METHODS += ["std", "logsumexp"]
