"""PyTorch's matrix / vector products and builders composed from matmul,
elementwise ops, reshapes and concatenation, so they run on either stream and
are differentiable through those ops: addmm, addmv, addbmm, baddbmm, outer /
ger, dot, vdot, mv, inner, kron, tensordot, trace, chain_matmul, cdist, dist,
cross, block_diag, diag_embed, diagflat, vander, cartesian_prod, combinations.
"""
from __future__ import annotations

import builtins
import functools
import itertools
import numbers

import numpy as np

from .._tensor import Tensor
from ..amp.autocast_mode import _state as _amp, lower as _amp_lower
from .common import wrap_dim

__all__ = ["addmm", "addmv", "addbmm", "baddbmm", "outer", "ger", "dot", "vdot", "mv", "inner", "kron", "tensordot",
           "trace", "chain_matmul", "cdist", "dist", "cross", "block_diag", "diag_embed", "diagflat", "vander",
           "cartesian_prod", "combinations"]
TENSOR_METHODS = ["addmm", "addmv", "addbmm", "baddbmm", "outer", "ger", "dot", "vdot", "mv", "inner", "kron",
                  "trace", "cross", "dist", "diag_embed", "diagflat"]


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
        raise ValueError(f"{fn}(): argument 'input' of shape {tuple(input.shape)} cannot be broadcast to the "
                         f"product's shape {tuple(prod.shape)}")
    out = _scale(prod, alpha)
    if isinstance(beta, numbers.Number) and beta == 0:
        return out
    return _scale(input, beta) + out


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``; mat1 (n, m), mat2 (m, p), input broadcastable to (n, p)."""
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py)
        input, mat1, mat2 = _amp_lower(input, mat1, mat2)
    from .linalg import mm

    _ndim("addmm", mat1, 2, "mat1")
    _ndim("addmm", mat2, 2, "mat2")
    return _add_scaled("addmm", input, mm(mat1, mat2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``; mat (n, m), vec (m,), input broadcastable to (n,)."""
    from .linalg import matmul

    _ndim("addmv", mat, 2, "mat")
    _ndim("addmv", vec, 1, "vec")
    return _add_scaled("addmv", input, matmul(mat, vec), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``; batches (b, n, m) and (b, m, p)."""
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py)
        input, batch1, batch2 = _amp_lower(input, batch1, batch2)
    from .linalg import bmm

    _ndim("addbmm", batch1, 3, "batch1")
    _ndim("addbmm", batch2, 3, "batch2")
    return _add_scaled("addbmm", input, bmm(batch1, batch2).sum(0), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` per batch; input broadcastable to (b, n, p)."""
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py)
        input, batch1, batch2 = _amp_lower(input, batch1, batch2)
    from .linalg import bmm

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
        raise ValueError(f"{fn}(): inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                         f"[{other.shape[0]}] to have the same number of elements")
    if input.dtype != other.dtype:
        raise TypeError(f"{fn}(): expected both vectors to have the same dtype, got {input.dtype} and {other.dtype}")


def dot(input, tensor):
    """Inner product of two 1-D tensors of one length and one dtype (0-d result)."""
    from .linalg import matmul

    _vecs("dot", input, tensor)
    return matmul(input, tensor)


def vdot(input, other):
    """``dot`` with the first argument conjugated: the same as dot for lucid's real dtypes."""
    from .linalg import matmul

    _vecs("vdot", input, other)
    return matmul(input, other)


def mv(input, vec):
    """Matrix-vector product: input (n, m), vec (m,) -> (n,)."""
    from .linalg import matmul

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
        raise ValueError(f"inner(): the last dimensions must match, got {tuple(input.shape)} and "
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
    from .linalg import matmul

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
            raise ValueError(f"tensordot(): contracted dimensions must match: a's dim {i} has size {a.shape[i]}, "
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


def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integers sum to int64, as sum)."""
    _ndim("trace", input, 2, "input")
    return input.diagonal().sum()


def chain_matmul(*matrices, out=None):
    """Product of 2-D matrices left to right (PyTorch's deprecated form of linalg.multi_dot)."""
    from .linalg import mm

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
    from .norms import vector_norm

    _check("cdist", x1, "x1")
    _check("cdist", x2, "x2")
    p = _p_arg("cdist", p)
    if x1.ndim < 2 or x2.ndim < 2:
        raise ValueError(f"cdist(): x1 and x2 must have at least 2 dimensions, got {x1.ndim} and {x2.ndim}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"cdist(): x1 and x2 must have the same number of columns, got {x1.shape[-1]} and "
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
    from .norms import vector_norm

    _check("dist", input)
    _check("dist", other, "other")
    return vector_norm(input - other, ord=_p_arg("dist", p))


def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` (broadcast operands). With ``dim=None`` the
    first dimension of size 3, as PyTorch's torch.cross."""
    from .shape import cat

    _check("cross", input)
    _check("cross", other, "other")
    try:
        shape = tuple(np.broadcast_shapes(input.shape, other.shape))
    except ValueError:
        raise ValueError(f"cross(): shapes {tuple(input.shape)} and {tuple(other.shape)} cannot be broadcast "
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


def block_diag(*tensors):
    """The tensors (0-d, 1-d as one row, or 2-d) placed along the diagonal of one matrix, zeros
    elsewhere; the dtype is their promoted dtype."""
    from .._creation import zeros
    from .._dtype import promote_types
    from .shape import cat

    mats = []
    for t in tensors:
        _check("block_diag", t, "tensors")
        if t.ndim > 2:
            raise ValueError(f"block_diag(): input tensors must have 2 or fewer dimensions, got {t.ndim}")
        mats.append(t.reshape(1, -1) if t.ndim == 1 else t.reshape(1, 1) if t.ndim == 0 else t)
    if not mats:
        return zeros(1, 0)
    dt = functools.reduce(promote_types, [m.dtype for m in mats])
    dev = mats[0].device
    total = builtins.sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        parts = []
        if left:
            parts.append(zeros(r, left, dtype=dt, device=dev))
        parts.append(m.to(dtype=dt) if m.dtype != dt else m)
        if total - left - c:
            parts.append(zeros(r, total - left - c, dtype=dt, device=dev))
        rows.append(cat(parts, 1) if len(parts) > 1 else parts[0])
        left += c
    return cat(rows, 0)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Each last-axis vector of ``input`` as the ``offset`` diagonal of a square matrix placed
    on output dims (dim1, dim2) (of the output's rank, input.ndim + 1)."""
    from .._creation import zeros
    from .shape import cat

    _check("diag_embed", input)
    nd = input.ndim + 1
    d1 = wrap_dim(dim1, nd, "diag_embed", "dim1")
    d2 = wrap_dim(dim2, nd, "diag_embed", "dim2")
    if d1 == d2:
        raise ValueError(f"diag_embed(): diagonal dimensions cannot be identical {dim1}, {dim2}")
    x = input.reshape(1) if input.ndim == 0 else input
    n = x.shape[-1]
    k = abs(builtins.int(offset))
    lead = tuple(x.shape[:-1])
    # x (…, n, 1) padded with n zeros per row: read n*n of the (…, n*(n+1)) values back as
    # (…, n, n) and x[i] lands at (i, i).
    z = x.unsqueeze(-1)
    z = cat([z, zeros(*lead, n, n, dtype=x.dtype, device=x.device)], -1) if n else z
    m = z.reshape(*lead, n * (n + 1))[..., : n * n].reshape(*lead, n, n)
    if k:
        # offset > 0: x[i] at (i, i + k): k zero columns on the left, k zero rows below.
        m = _pad(m, offset, k)
    rest = [i for i in range(nd) if i not in (d1, d2)]
    order = [0] * nd
    for src, dst in zip(list(range(nd - 2)) + [nd - 2, nd - 1], rest + [d1, d2]):
        order[dst] = src
    return m.permute(*order)


def _pad(m, offset, k):
    from .shape import pad

    return pad(m, (k, 0, 0, k) if offset > 0 else (0, k, k, 0))


def diagflat(input, offset=0):
    """``input`` flattened onto the ``offset`` diagonal of a square 2-D matrix."""
    from .shape_extra import diag

    _check("diagflat", input)
    return diag(input.reshape(-1), offset)


def vander(x, N=None, increasing=False):
    """Vandermonde matrix of a 1-D ``x``: columns x^(N-1) … x^0 (x^0 … x^(N-1) with
    ``increasing``), N = len(x) by default; built as a running product (exact for integers)."""
    from .._creation import full_like
    from .scan import cumprod
    from .shape import cat

    _check("vander", x, "x")
    if x.ndim != 1:
        raise ValueError(f"vander(): argument 'x' must be a 1-D tensor, got {x.ndim}-D")
    n = x.shape[0] if N is None else N
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ValueError(f"vander(): argument 'N' must be a non-negative int, got {N!r}")
    if x.dtype.name == "bool":
        x = x.to(dtype="int64")
    col = x.reshape(-1, 1)
    if n == 0:
        return col[:, :0]
    ones = full_like(col, 1)
    out = ones if n == 1 else cumprod(cat([ones] + [col] * (n - 1), 1), 1)
    return out if increasing else out.flip(1)


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, rows in lexicographic order
    (N, k); one tensor is returned as it is."""
    from .shape import stack
    from .shape_extra import meshgrid

    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _check("cartesian_prod", t, "tensors")
        if t.ndim != 1:
            raise ValueError(f"cartesian_prod(): expected 1-D tensors, got {t.ndim}-D")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-D tensor's elements (itertools' order) as rows
    (count, r); ``with_replacement`` allows repeats. r == 0 gives an empty 1-D tensor."""
    from .._creation import tensor
    from .indexing import index_select
    from .shape import stack

    _check("combinations", input)
    if input.ndim != 1:
        raise ValueError(f"combinations(): expected a 1-D tensor, got {input.ndim}-D")
    if not isinstance(r, (int, np.integer)) or isinstance(r, bool) or r < 0:
        raise ValueError(f"combinations(): argument 'r' must be a non-negative int, got {r!r}")
    if r == 0:
        return input[:0]
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    cols = [index_select(input, 0, tensor(idx[:, j].copy(), device=input.device)) for j in range(r)]
    return stack(cols, 1)
