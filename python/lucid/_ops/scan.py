"""Inclusive scans (csrc/ops/scan.cpp): cumsum, cumprod, with gradients.

Integer / bool inputs give int64; floats keep their dtype (``dtype=`` casts
first, as PyTorch). The CPU stream accumulates left to right; MLX's scan
may associate differently, so float results agree across streams within the
tolerance in docs/numerics.md, not bit for bit.
"""
from __future__ import annotations

from .. import _C
from .._dtype import as_dtype
from .._tensor import Tensor
from ..autograd import Function
from .common import wrap_dim

__all__ = ["cumsum", "cumprod"]
TENSOR_METHODS = ["cumsum", "cumprod"]


def _reverse_cumsum(g, d):
    """out[i] = sum_{k >= i} g[k] along d, with lucid ops (differentiable)."""
    from .shape import flip

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
        from .indexing import index_select
        from .shape import cat
        from .._creation import tensor

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
