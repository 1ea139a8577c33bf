"""Matrix and vector products: matmul, mm, bmm (csrc/ops/linalg.cpp) with their
gradients; composed from those, elementwise ops, reshapes and concatenation (so they
run on either stream and are differentiable through those ops): addmm, addmv, addbmm,
baddbmm, outer / ger, dot, vdot, mv, inner, kron, tensordot, chain_matmul, cross.

``matmul`` follows numpy: a 1-D ``input`` is a row vector and a 1-D
``other`` a column vector (the added axis is dropped from the result),
batch axes broadcast. float32 runs on BLAS sgemm (CPU stream) or
``mlx.core.matmul`` (GPU stream); float16/bfloat16 compute in float32 and
round once; integer products are exact (int64 accumulation, wrapped to the
result dtype) on both streams.
"""
from __future__ import annotations

import builtins
import functools
import numbers

import numpy as np

from .._C import ShapeError
from .. import _C
from .._tensor import Tensor
from ..autograd import Function, is_grad_enabled
from . import shape
from .autocast import autocast_op
from .common import sum_to_shape, wrap, wrap_dim
from .shape import cat

__all__ = ["matmul", "mm", "bmm", "addmm", "addmv", "addbmm", "baddbmm", "outer", "ger", "dot", "vdot", "mv",
           "inner", "kron", "tensordot", "chain_matmul", "cross"]
TENSOR_METHODS = ["matmul", "mm", "bmm", "addmm", "addmv", "addbmm", "baddbmm", "outer", "ger", "dot", "vdot", "mv",
                  "inner", "kron", "cross"]


def _mT(t):
    return shape.transpose(t, -1, -2)


class _Matmul(Function):
    @staticmethod
    def forward(ctx, a, b, name):
        ctx.save_for_backward(a, b)
        return wrap(getattr(_C, name)(a._impl, b._impl))

    @staticmethod
    def backward(ctx, g):
        # With 1-D operands lifted to matrices (a: (1, k), b: (k, 1)) and g
        # given the matching (…, m, n) shape: dA = g @ B^T, dB = A^T @ g,
        # each summed over the batch axes its operand was broadcast along.
        a, b = ctx.saved_tensors
        a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
        b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1:
            g2 = shape.unsqueeze(g2, -2 if b.ndim > 1 else 0)
        if b.ndim == 1:
            g2 = shape.unsqueeze(g2, -1)
        ga = gb = None
        # Under create_graph the products are recorded (matmul), else the kernel directly.
        mm_ = matmul if is_grad_enabled() else (lambda p, q: _C.matmul(p._impl, q._impl))
        if ctx.needs_input_grad[0]:
            ga = sum_to_shape(mm_(g2, _mT(b2)), a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            gb = sum_to_shape(mm_(_mT(a2), g2), b2.shape).reshape(b.shape)
        return ga, gb, None


# matmul / mm / bmm run and record in C++ (csrc/autograd/linalg.h: first-order
# formula against ops::); _Matmul is their node's `function`, for create_graph.
_C._register_linalg(_Matmul)
_autograd_matmul = _C.autograd_matmul


@autocast_op("lower")
def matmul(input, other):
    """Matrix product with numpy's rules (1-D operands, broadcast batch axes).

    Shapes: ``(…, m, k) @ (…, k, n) -> (…, m, n)``; ``(k,) @ (k,) -> ()``.
    Raises ValueError naming both shapes when the inner dimensions differ,
    TypeError for bool tensors, ValueError for tensors on different devices.

    >>> import lucid
    >>> a = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> (a @ lucid.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    >>> lucid.matmul(a, a).tolist()
    [[7.0, 10.0], [15.0, 22.0]]
    """
    return _autograd_matmul(input, other, "matmul")  # kernel and (when recording) node: one C++ call


@autocast_op("lower")
def mm(input, mat2):
    """2-D matrix product ``(m, k) @ (k, n) -> (m, n)``; ValueError for other ranks.

    >>> import lucid
    >>> lucid.mm(lucid.tensor([[1, 2]]), lucid.tensor([[3], [4]])).tolist()
    [[11]]
    """
    return _autograd_matmul(input, mat2, "mm")  # kernel and (when recording) node: one C++ call


@autocast_op("lower")
def bmm(input, mat2):
    """Batched product ``(b, m, k) @ (b, k, n) -> (b, m, n)`` without broadcasting.

    >>> import lucid
    >>> lucid.bmm(lucid.ones(2, 1, 3), lucid.ones(2, 3, 1)).shape
    (2, 1, 1)
    """
    return _autograd_matmul(input, mat2, "bmm")  # kernel and (when recording) node: one C++ call


# ----- composed products ---------------------------------------------------------------------

def _check(fn, x, argument="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")


def _ndim(fn, x, n, argument):
    _check(fn, x, argument)
    if x.ndim != n:
        raise ValueError(f"{fn}(): argument '{argument}' must be a {n}-D tensor, got {x.ndim}-D")


def _scale(t, s):
    return t if isinstance(s, numbers.Number) and s == 1 else t * s


def _add_scaled(fn, input, prod, beta, alpha):
    """``beta * input + alpha * prod`` with ``input`` broadcast to prod's shape;
    with beta == 0 ``input`` is ignored (its NaNs do not propagate), as PyTorch."""
    _check(fn, input)
    try:
        shape = tuple(np.broadcast_shapes(input.shape, prod.shape))
    except ValueError:
        shape = None
    if shape != tuple(prod.shape):
        raise ShapeError(f"{fn}(): argument 'input' of shape {tuple(input.shape)} cannot be broadcast to the "
                         f"product's shape {tuple(prod.shape)}")
    out = _scale(prod, alpha)
    if isinstance(beta, numbers.Number) and beta == 0:
        return out
    return _scale(input, beta) + out


@autocast_op("lower")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``; mat1 (n, m), mat2 (m, p), input broadcastable to (n, p)."""
    _ndim("addmm", mat1, 2, "mat1")
    _ndim("addmm", mat2, 2, "mat2")
    return _add_scaled("addmm", input, mm(mat1, mat2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``; mat (n, m), vec (m,), input broadcastable to (n,)."""
    _ndim("addmv", mat, 2, "mat")
    _ndim("addmv", vec, 1, "vec")
    return _add_scaled("addmv", input, matmul(mat, vec), beta, alpha)


@autocast_op("lower")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``; batches (b, n, m) and (b, m, p)."""
    _ndim("addbmm", batch1, 3, "batch1")
    _ndim("addbmm", batch2, 3, "batch2")
    return _add_scaled("addbmm", input, bmm(batch1, batch2).sum(0), beta, alpha)


@autocast_op("lower")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` per batch; input broadcastable to (b, n, p)."""
    _ndim("baddbmm", batch1, 3, "batch1")
    _ndim("baddbmm", batch2, 3, "batch2")
    return _add_scaled("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def outer(input, vec2):
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]``."""
    _ndim("outer", input, 1, "input")
    _ndim("outer", vec2, 1, "vec2")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


def ger(input, vec2):
    """Alias of :func:`outer` (PyTorch's older name)."""
    return outer(input, vec2)


def _vecs(fn, input, other):
    _ndim(fn, input, 1, "input")
    _ndim(fn, other, 1, "tensor")
    if input.shape[0] != other.shape[0]:
        raise ShapeError(f"{fn}(): inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                         f"[{other.shape[0]}] to have the same number of elements")
    if input.dtype != other.dtype:
        raise TypeError(f"{fn}(): expected both vectors to have the same dtype, got {input.dtype} and {other.dtype}")


def dot(input, tensor):
    """Inner product of two 1-D tensors of one length and one dtype (0-d result)."""
    _vecs("dot", input, tensor)
    return matmul(input, tensor)


def vdot(input, other):
    """``dot`` with the first argument conjugated: the same as dot for lucid's real dtypes."""
    _vecs("vdot", input, other)
    return matmul(input, other)


def mv(input, vec):
    """Matrix-vector product: input (n, m), vec (m,) -> (n,)."""
    _ndim("mv", input, 2, "input")
    _ndim("mv", vec, 1, "vec")
    return matmul(input, vec)


def inner(input, other):
    """Sum over the last axes: ``out[i.., j..] = sum_k input[i.., k] * other[j.., k]``; a 0-d
    operand scales the other."""
    _check("inner", input)
    _check("inner", other, "other")
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise ShapeError(f"inner(): the last dimensions must match, got {tuple(input.shape)} and "
                         f"{tuple(other.shape)}")
    return tensordot(input, other, dims=([input.ndim - 1], [other.ndim - 1]))


def _dim_list(fn, dims, ndim, argument):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        dims = [dims]
    return [wrap_dim(d, ndim, fn, argument) for d in dims]


def tensordot(a, b, dims=2):
    """Sum of products over axes: ``dims`` an int n (a's last n axes with b's first n) or a pair
    of lists ``([a axes], [b axes])``. Output: a's other axes, then b's."""
    _check("tensordot", a, "a")
    _check("tensordot", b, "b")
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        n = builtins.int(dims)
        if n < 0:
            raise ValueError(f"tensordot(): argument 'dims' must be non-negative, got {n}")
        if n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot(): argument 'dims' ({n}) exceeds the operands' ranks ({a.ndim}, {b.ndim})")
        da, db = list(range(a.ndim - n, a.ndim)), list(range(n))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2:
        da = _dim_list("tensordot", dims[0], a.ndim, "dims")
        db = _dim_list("tensordot", dims[1], b.ndim, "dims")
        if len(da) != len(db):
            raise ValueError(f"tensordot(): argument 'dims' must list as many axes of a as of b, got {dims}")
    else:
        raise TypeError(f"tensordot(): argument 'dims' must be an int or a pair of lists of ints, got {dims!r}")
    if len(set(da)) != len(da) or len(set(db)) != len(db):
        raise ValueError(f"tensordot(): argument 'dims' repeats an axis: {dims}")
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise ShapeError(f"tensordot(): contracted dimensions must match: a's dim {i} has size {a.shape[i]}, "
                             f"b's dim {j} has size {b.shape[j]}")
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = builtins.int(np.prod([a.shape[d] for d in da], dtype=np.int64))
    am = a.permute(*(fa + da)).reshape(-1, k) if a.ndim else a.reshape(1, 1)
    bm = b.permute(*(db + fb)).reshape(k, -1) if b.ndim else b.reshape(1, 1)
    return matmul(am, bm).reshape(*([a.shape[d] for d in fa] + [b.shape[d] for d in fb]))


def kron(input, other):
    """Kronecker product: the operands padded to one rank with leading 1s,
    ``out[i*p + k, ...] = input[i, ...] * other[k, ...]``, shape the product of the sizes."""
    _check("kron", input)
    _check("kron", other, "other")
    n = builtins.max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    a = input.reshape(*[v for s in sa for v in (s, 1)]) if n else input
    b = other.reshape(*[v for s in sb for v in (1, s)]) if n else other
    return (a * b).reshape(*[x * y for x, y in zip(sa, sb)])


def chain_matmul(*matrices, out=None):
    """Product of 2-D matrices left to right (PyTorch's deprecated form of linalg.multi_dot)."""
    if out is not None:
        raise NotImplementedError("chain_matmul(): argument 'out' is not supported")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise ValueError("chain_matmul(): expected one or more tensors")
    for m in matrices:
        _ndim("chain_matmul", m, 2, "matrices")
    if len(matrices) == 1:
        return matrices[0].clone()
    return functools.reduce(mm, matrices)


def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` (broadcast operands). With ``dim=None`` the
    first dimension of size 3, as PyTorch's torch.cross."""
    _check("cross", input)
    _check("cross", other, "other")
    try:
        shape = tuple(np.broadcast_shapes(input.shape, other.shape))
    except ValueError:
        raise ShapeError(f"cross(): shapes {tuple(input.shape)} and {tuple(other.shape)} cannot be broadcast "
                         "together") from None
    a = input if tuple(input.shape) == shape else input.expand(shape)
    b = other if tuple(other.shape) == shape else other.expand(shape)
    if dim is None:
        dims = [i for i, s in enumerate(shape) if s == 3]
        if not dims:
            raise ValueError(f"cross(): no dimension of size 3 in input of shape {shape}")
        d = dims[0]
    else:
        d = wrap_dim(dim, len(shape), "cross")
        if shape[d] != 3:
            raise ValueError(f"cross(): argument 'dim' ({dim}) must name a dimension of size 3, got size {shape[d]}")
    a0, a1, a2 = (a.narrow(d, i, 1) for i in range(3))
    b0, b1, b2 = (b.narrow(d, i, 1) for i in range(3))
    return cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)
