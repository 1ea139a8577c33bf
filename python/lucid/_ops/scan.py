"""Scans along an axis: the inclusive scans cumsum, cumprod (csrc/ops/scan.cpp) with
gradients; composed from lucid ops: cummax / cummin (the running extremes and where they
are), logcumsumexp, and diff (forward differences).

Integer / bool inputs give int64; floats keep their dtype (``dtype=`` casts
first, as PyTorch). The CPU stream accumulates left to right; MLX's scan
may associate differently, so float results agree across streams within the
tolerance in docs/numerics.md, not bit for bit.
"""
from __future__ import annotations

import numpy as np

from .. import _C
from .._creation import full, tensor
from .._dtype import as_dtype
from .._tensor import Tensor
from ..autograd import Function
from .common import constant, host_array, returns_values_indices, wrap_dim
from .elementwise import logical_xor, maximum, where
from .indexing import gather, index_select
from .shape import cat, flip
from .special import log1p

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "diff"]
TENSOR_METHODS = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "diff"]


def _reverse_cumsum(g, d):
    """out[i] = sum_{k >= i} g[k] along d, with lucid ops (differentiable)."""
    return flip(cumsum(flip(g, [d]), d), [d])


class _Cumsum(Function):
    @staticmethod
    def forward(ctx, x, d):
        ctx.dim = d
        return _C.cumsum(x._impl, d)

    @staticmethod
    def backward(ctx, g):
        if g.ndim == 0:
            return g, None
        return _reverse_cumsum(g, ctx.dim), None


class _Cumprod(Function):
    @staticmethod
    def forward(ctx, x, d):
        y = _C.cumprod(x._impl, d)
        ctx.dim = d
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        d = ctx.dim
        if g.ndim == 0:
            return g, None
        has_zero = bool(_C.any(_C.eq(x._impl, _C.full((), 0.0, x._dtype_name, x._device_name)),
                               None, False).item())
        if not has_zero:
            # dy_k/dx_i = y_k / x_i for k >= i.
            return _reverse_cumsum(g * y, d) / x, None
        # With zeros the quotient is undefined: grad_i = sum_{k >= i} g_k *
        # prod_{j <= k, j != i} x_j, i.e. the cumprod of x with x_i set to 1,
        # read from position i on. One scan per position (n scans).
        n = x.shape[d]
        parts = []
        for i in range(n):
            idx = tensor([i], device=x.device)
            ones = index_select(x, d, idx) * 0 + 1
            pieces = ([index_select(x, d, tensor(list(range(i)), device=x.device))] if i else []) + [ones] + (
                [index_select(x, d, tensor(list(range(i + 1, n)), device=x.device))] if i + 1 < n else [])
            c = cumprod(cat(pieces, d), d)
            tail = tensor(list(range(i, n)), device=x.device)
            parts.append((index_select(c, d, tail) * index_select(g, d, tail)).sum(d, keepdim=True))
        return cat(parts, d), None


# cumsum and cumprod run and record in C++ (csrc/autograd/scan.h, first-order formulas
# against ops::); these Functions are their nodes' `function`, for create_graph.
_C._register_scan(_Cumsum, _Cumprod)
_autograd_cumsum, _autograd_cumprod = _C.autograd_cumsum, _C.autograd_cumprod


def _prepare(fn, input, dim, dtype):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a tensor, got {type(input).__name__}")
    d = wrap_dim(dim, input.ndim, fn)
    if dtype is not None:
        input = input.to(as_dtype(dtype))
    return input, d


def cumsum(input, dim, *, dtype=None):
    """Running sum along ``dim``: ``out[i] = input[0] + ... + input[i]``.

    >>> import lucid
    >>> lucid.cumsum(lucid.tensor([1, 2, 3]), 0).tolist()
    [1, 3, 6]
    """
    x, d = _prepare("cumsum", input, dim, dtype)
    return _autograd_cumsum(x, d)  # kernel and node: one C++ call


def cumprod(input, dim, *, dtype=None):
    """Running product along ``dim``; the gradient is exact also where ``input`` holds zeros.

    >>> import lucid
    >>> lucid.cumprod(lucid.tensor([1.0, 2.0, 3.0]), 0).tolist()
    [1.0, 2.0, 6.0]
    """
    x, d = _prepare("cumprod", input, dim, dtype)
    return _autograd_cumprod(x, d)


# ----- composed: cummax / cummin, logcumsumexp, diff ----------------------------------------
# Where an index depends on comparisons along the scan (cummax / cummin) it is found on the
# host from the values read back, and the values are then gathered from the input on its
# device, so the gradient flows to the elements chosen, as in PyTorch.

def _check(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


def _float(fn, x):
    if not x.dtype.is_floating_point:
        raise TypeError(f"{fn}(): expected input to have a floating point dtype, got {x.dtype}")


def _cum_extreme(fn, input, dim, is_max):
    _check(fn, input)
    if input.ndim == 0:
        return input.clone(), constant(0, input, "int64")
    d = wrap_dim(dim, input.ndim, fn)
    a = np.moveaxis(host_array(input), d, -1)
    idx = np.zeros(a.shape, dtype=np.int64)
    if a.shape[-1]:
        best = a[..., 0].copy()
        cur = np.zeros(a.shape[:-1], dtype=np.int64)
        for i in range(a.shape[-1]):
            v = a[..., i]
            with np.errstate(invalid="ignore"):
                better = (v >= best) if is_max else (v <= best)
            # PyTorch's rule: a NaN takes over (and each later NaN), then nothing replaces it
            take = np.isnan(v) | (~np.isnan(best) & better) if a.dtype.kind == "f" else better
            best = np.where(take, v, best)
            cur = np.where(take, i, cur)
            idx[..., i] = cur
    index = constant(np.moveaxis(idx, -1, d).copy(), input, "int64")
    return gather(input, d, index), index


@returns_values_indices
def cummax(input, dim):
    """Running maximum along ``dim``: ``(values, indices)``; ties take the later index and a
    NaN propagates, as PyTorch."""
    return _cum_extreme("cummax", input, dim, True)


@returns_values_indices
def cummin(input, dim):
    """Running minimum along ``dim``: ``(values, indices)`` (ties: the later index; NaN propagates)."""
    return _cum_extreme("cummin", input, dim, False)


def _logaddexp(a, b):
    m = maximum(a, b)
    # exp(-|a - b|) in [0, 1]: never overflows; equal infinities give m itself
    d = (a - b).abs()
    safe = where(d.isnan(), constant(0, d), d)
    return m + log1p((-safe).exp())


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input)))`` along ``dim`` without overflow: a log-step scan of pairwise
    log-add-exp (each step adds the running value ``2^k`` places back)."""
    _check("logcumsumexp", input)
    _float("logcumsumexp", input)
    if input.ndim == 0:
        return input.clone()
    d = wrap_dim(dim, input.ndim, "logcumsumexp")
    n = input.shape[d]
    x, k = input, 1
    while k < n:
        shape = list(x.shape)
        shape[d] = k
        pad = full(shape, float("-inf"), dtype=x.dtype, device=x.device)
        prev = cat([pad, x.narrow(d, 0, n - k)], d)
        head, tail = x.narrow(d, 0, k), _logaddexp(x.narrow(d, k, n - k), prev.narrow(d, k, n - k))
        x = cat([head, tail], d)
        k *= 2
    return x


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """n-th forward difference along ``dim`` (``prepend`` / ``append`` concatenated first;
    logical xor for bool tensors)."""
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
