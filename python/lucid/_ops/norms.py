"""Norms: vector_norm, matrix_norm, norm (``lucid.linalg.*``) and Tensor.norm; the
distances cdist and dist.

``vector_norm(x, ord)`` = ``(sum |x|^ord)^(1/ord)`` over ``dim`` (all
elements when None); ``ord=inf`` / ``-inf`` are max / min of ``|x|``, ``ord=0``
counts non-zeros. The gradient of the 2-norm (and of every p-norm) is 0 where
the norm is 0, as in PyTorch, instead of NaN.
"""
from __future__ import annotations

import math
import numbers

from .._C import ShapeError
from .. import _C
from .._dtype import as_dtype
from .._tensor import Tensor
from ..autograd import Function
from ..autograd.grad_mode import is_grad_enabled
from .common import dims_arg
from .elementwise import where

__all__ = ["vector_norm", "matrix_norm", "linalg_norm", "norm"]
TENSOR_METHODS = ["norm"]

# linalg.svdvals, for the nuclear and spectral norms: the decompositions are a breadth
# package above the core (lucid.linalg), which sets this when it loads (``import lucid``
# loads it).
svdvals = None


def _check(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


class _PNorm(Function):
    """(sum |x|^p)^(1/p) for finite p > 0 as one graph node (NormBackward):
    `_C.autograd_pnorm` (csrc/autograd/norms.cpp) runs it (the 2-norm as
    sqrt(sum(|x| * |x|))) and records the node, whose first-order backward (this
    class's grad-mode-off branch, op for op) is there. This class is its formula
    under create_graph; the node is its ctx: saved (x, n), ``ctx.scalars[0]`` p,
    ``ctx.params[0]`` keepdim, ``ctx.dims`` (None: all axes), ``ctx.shape`` x's.
    d/dx = sign(x) |x|^(p-1) / n^(p-1), 0 where the norm is 0."""

    @staticmethod
    def backward(ctx, g):
        x, n = ctx.saved_tensors
        dims, shape = ctx.dims, tuple(ctx.shape)
        dims = None if dims is None else tuple(dims)
        if not ctx.params[0] and dims != ():  # not keepdim
            if is_grad_enabled():  # create_graph: recorded reshapes (broadcasting does the rest)
                axes = range(len(shape)) if dims is None else {d % len(shape) for d in dims}
                keep = tuple(1 if i in axes else s for i, s in enumerate(shape))
                g, n = g.reshape(keep), n.reshape(keep)
            else:
                g = _C.broadcast_reduced(g._impl, shape, dims)
                n = _C.broadcast_reduced(n._impl, shape, dims)
        p = ctx.scalars[0]
        if p == 2.0:
            d = x / n
        elif p == 1.0:
            d = x.sign() + n * 0
        else:
            d = x.sign() * x.abs() ** (p - 1.0) / n ** (p - 1.0)
        d = where(n == 0, 0.0, d)  # PyTorch's subgradient 0 at a zero norm, not 0/0
        return (g * d,)


_C._register_norm(_PNorm)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """The ``ord``-norm of ``x`` over ``dim`` (int, tuple, or None: all elements).

    >>> import lucid
    >>> lucid.linalg.vector_norm(lucid.tensor([3.0, 4.0])).item()
    5.0
    """
    _check("vector_norm", x)
    if dtype is not None:
        x = x.to(as_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise TypeError(f"vector_norm(): expected a floating input, got {x.dtype}")
    dims = dims_arg(dim, None, x.ndim, "vector_norm")
    try:
        p = float(ord)
    except (TypeError, ValueError):
        raise ValueError(f"vector_norm(): argument 'ord' must be a number, got {ord!r}") from None
    a = x.abs()
    if p == math.inf:
        return a.amax(dim=dims, keepdim=keepdim) if x.numel() else a.sum(dim=dims, keepdim=keepdim)
    if p == -math.inf:
        return a.amin(dim=dims, keepdim=keepdim)
    if p == 0:
        return (x != 0).to(x.dtype).sum(dim=dims, keepdim=keepdim)
    if p < 0:
        return (a ** p).sum(dim=dims, keepdim=keepdim) ** (1.0 / p)
    return _C.autograd_pnorm(x, p, dims, bool(keepdim))  # the norm and (when recording) NormBackward


def matrix_norm(x, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):  # noqa: A002
    """Matrix norms over the two axes ``dim``: ``"fro"`` (Frobenius), ``1`` /
    ``-1`` (max / min absolute column sum), ``inf`` / ``-inf`` (rows),
    ``"nuc"`` (sum of singular values), ``2`` / ``-2`` (largest / smallest
    singular value; from ``linalg.svdvals``, whose gradient needs distinct
    singular values)."""
    _check("matrix_norm", x)
    if x.ndim < 2:
        raise ValueError(f"matrix_norm(): expected a tensor with at least 2 dims, got {x.ndim}")
    d = dims_arg(tuple(dim), None, x.ndim, "matrix_norm")
    if len(d) != 2:
        raise ValueError(f"matrix_norm(): argument 'dim' must name two axes, got {dim!r}")
    r, c = (dim[0] % x.ndim, dim[1] % x.ndim)
    if ord == "fro":
        return vector_norm(x, 2, (r, c), keepdim, dtype=dtype)
    if ord in ("nuc", 2, -2):
        if dtype is not None:
            x = x.to(as_dtype(dtype))
        if svdvals is None:
            raise RuntimeError(f"matrix_norm(): ord={ord!r} needs the singular values of lucid.linalg; "
                               "import lucid first")
        rest = [i for i in range(x.ndim) if i not in (r, c)]
        sv = svdvals(x.permute(*rest, r, c))
        out = sv.sum(-1) if ord == "nuc" else sv.amax(-1) if ord == 2 else sv.amin(-1)
        if keepdim:
            out = out.unsqueeze(min(r, c)).unsqueeze(max(r, c))
        return out
    if ord in (1, -1, math.inf, -math.inf):
        over, across = (r, c) if ord in (1, -1) else (c, r)
        s = x.abs().sum(dim=over, keepdim=True)
        out = s.amax(dim=across, keepdim=True) if ord > 0 else s.amin(dim=across, keepdim=True)
        return out if keepdim else out.squeeze(max(r, c)).squeeze(min(r, c))
    raise ValueError(f"matrix_norm(): unsupported 'ord' {ord!r}")


def linalg_norm(x, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """``lucid.linalg.norm``: with ``ord=None`` the 2-norm of the flattened
    input (or over ``dim``); a 2-tuple ``dim`` or a string ``ord`` means a
    matrix norm; otherwise :func:`vector_norm`."""
    _check("norm", x)
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return vector_norm(x, 2, dim, keepdim, dtype=dtype)
    if isinstance(ord, str) or (dim is not None and len(dim) == 2) or (dim is None and x.ndim == 2):
        return matrix_norm(x, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(x, ord, dim, keepdim, dtype=dtype)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """``Tensor.norm`` / ``lucid.norm``: ``p="fro"`` or a number: the vector
    p-norm over ``dim`` (all elements when None); ``"nuc"``: the nuclear norm
    of the matrices over ``dim`` (the last two axes when None).

    >>> import lucid
    >>> lucid.tensor([[3.0, 4.0]]).norm().item()
    5.0
    """
    _check("norm", input)
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


# ----- distances -----------------------------------------------------------------------------

def _p_arg(fn, p):
    if not isinstance(p, numbers.Real) or isinstance(p, bool):
        raise TypeError(f"{fn}(): argument 'p' must be a number, got {type(p).__name__}")
    if p < 0:
        raise ValueError(f"{fn}(): argument 'p' must be non-negative, got {p}")
    return float(p)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of x1 (…, P, M) and x2 (…, R, M) -> (…, P, R); batch
    axes broadcast. Computed from the differences (``compute_mode`` is accepted for
    compatibility; the matmul shortcut is never taken, so p=2 is exact at equal rows)."""
    _check("cdist", x1, "x1")
    _check("cdist", x2, "x2")
    p = _p_arg("cdist", p)
    if x1.ndim < 2 or x2.ndim < 2:
        raise ValueError(f"cdist(): x1 and x2 must have at least 2 dimensions, got {x1.ndim} and {x2.ndim}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"cdist(): x1 and x2 must have the same number of columns, got {x1.shape[-1]} and "
                         f"{x2.shape[-1]}")
    if not x1.dtype.is_floating_point or not x2.dtype.is_floating_point:
        raise TypeError(f"cdist(): expected floating point inputs, got {x1.dtype} and {x2.dtype}")
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"cdist(): argument 'compute_mode' is not a known mode: {compute_mode!r}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return vector_norm(diff, ord=p, dim=-1)


def dist(input, other, p=2):
    """p-norm of ``input - other`` (broadcast), a 0-d tensor."""
    _check("dist", input)
    _check("dist", other, "other")
    return vector_norm(input - other, ord=_p_arg("dist", p))


__all__ += ["cdist", "dist"]
TENSOR_METHODS += ["dist"]
