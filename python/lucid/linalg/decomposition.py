"""Matrix decompositions and solvers (csrc/ops/decomposition.cpp) with their gradients.

``inv``, ``solve``, ``det``, ``slogdet``, ``cholesky``, ``eigh`` / ``eigvalsh``,
``svd`` / ``svdvals``, ``qr``, ``solve_triangular`` and ``lu_factor`` run
LAPACK on the CPU stream (scipy-openblas32, Accelerate on macOS) and
``mlx.core.linalg`` on the GPU stream (on MLX's CPU device, the only one its
linalg ops have); ``logdet``, ``lu`` and ``lu_solve`` are composed from them
(pinv, matrix_power, matrix_exp … are in matrix_functions.py). Public names
live in ``lucid.linalg`` (PyTorch's spellings); the top-level aliases
``lucid.inverse``, ``det``, ``slogdet``, ``logdet``, ``cholesky`` and the
Tensor methods of the same names are exported from here.

Gradients are autograd Functions whose backward is written in lucid ops, so
they run on either stream and can be differentiated again; inv, solve, det,
cholesky, eigvalsh, svdvals and solve_triangular record their node in C++
(csrc/autograd/decomposition.h), whose first-order formulas do the same ops::
operations, and these Functions' backwards serve create_graph. Caveats, as in
PyTorch: det's gradient uses A^-1, or the SVD's cofactors at a singular A;
eigh's and svd's gradients divide by eigenvalue / singular value
gaps (distinct values needed; svd's also nonzero singular values when
m != n); qr's gradient is defined for mode 'reduced' with m >= n; svd's for
full_matrices=False or square inputs.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import _C
from .._C import LinAlgError, ShapeError
from .._creation import eye, tensor
from .._ops import shape
from .._ops.common import sum_to_shape
from .._ops.diagonals import diag_embed, diagonal
from .._ops.elementwise import log, where
from .._ops.linalg import matmul
from .._tensor import Tensor
from ..autograd import Function, is_grad_enabled

__all__ = ["inverse", "det", "slogdet", "logdet", "cholesky"]
TENSOR_METHODS = list(__all__)

SlogdetResult = namedtuple("slogdet", ["sign", "logabsdet"])
EighResult = namedtuple("eigh", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("svd", ["U", "S", "Vh"])
QRResult = namedtuple("qr", ["Q", "R"])


def _mT(t):
    return shape.transpose(t, -1, -2)


def _tensor(fn, x, name="A"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: argument '{name}' must be a tensor, got {type(x).__name__}")


def _bool(fn, v, name):
    if not isinstance(v, bool):
        raise TypeError(f"{fn}: argument '{name}' must be a bool, got {type(v).__name__}")


def _str(fn, v, name):
    if not isinstance(v, str):
        raise TypeError(f"{fn}: argument '{name}' must be a str, got {type(v).__name__}")


def _eye(a, n):
    """An (n, n) identity on a's device and dtype (broadcasts against batches)."""
    return eye(n, dtype=a.dtype, device=a.device)


def _scale_matrices(c, m):
    """c (…) times each matrix of m (…, n, n)."""
    return shape.unsqueeze(shape.unsqueeze(c, -1), -1) * m


# ----- inv -------------------------------------------------------------------------------------
# inv, solve, det, cholesky, eigvalsh, svdvals and solve_triangular run and
# record in C++ (csrc/autograd/decomposition.h: InvBackward ... with first-order
# formulas against ops::); the Functions below are their nodes' `function`s,
# whose backwards serve create_graph. The node is the ctx: saved_tensors,
# needs_input_grad, `params` (the bool arguments as 0 / 1) and `in_shape` (B's
# shape), as decomposition.h lists per op.
class _Inv(Function):
    @staticmethod
    def backward(ctx, g):
        # d(A^-1) = -A^-1 dA A^-1, so dA = -A^-T G A^-T. Saved: (A^-1).
        (y,) = ctx.saved_tensors
        yt = _mT(y)
        return -matmul(matmul(yt, g), yt)


def inv(A):
    """The inverse of each square matrix of ``A`` (…, n, n): float32 / float64.

    Raises lucid.linalg.LinAlgError (a RuntimeError and a ValueError) naming the
    zero diagonal element of the LU factor when a matrix is singular, ShapeError
    for non-square input, TypeError for other dtypes. Gradient: -A^-T G A^-T.

    >>> import lucid
    >>> lucid.linalg.inv(lucid.tensor([[2.0, 1.0], [0.0, 4.0]])).tolist()
    [[0.5, -0.125], [0.0, 0.25]]
    """
    _tensor("linalg.inv", A)
    return _C.autograd_inv(A)  # the kernel and (when recording) InvBackward: one C++ call


def inverse(input):
    """``lucid.linalg.inv`` under PyTorch's top-level name."""
    return inv(input)


# ----- solve -----------------------------------------------------------------------------------
class _Solve(Function):
    @staticmethod
    def backward(ctx, g):
        # Left: X = A^-1 B, gB = A^-T G, gA = -gB X^T. Right: X = B A^-1,
        # gB = G A^-T, gA = -X^T gB. Batch axes B or A was broadcast along are summed.
        # Saved: (A, X); params: (left, vector B); in_shape: B's shape.
        a, x = ctx.saved_tensors
        left, vector = (bool(p) for p in ctx.params)
        if vector:  # B was a column (…, n, 1), also with left=False (as PyTorch)
            x, g = shape.unsqueeze(x, -1), shape.unsqueeze(g, -1)
        gb = solve(_mT(a), g, left=left)
        ga = None
        if ctx.needs_input_grad[0]:
            ga = sum_to_shape(-(matmul(gb, _mT(x)) if left else matmul(_mT(x), gb)), a.shape)
        if vector:
            gb = shape.squeeze(gb, -1)
        return ga, sum_to_shape(gb, ctx.in_shape) if ctx.needs_input_grad[1] else None


def solve(A, B, *, left=True):
    """X with ``A X = B`` (``left=True``) or ``X A = B``; A (…, n, n).

    B is (…, n, k), or a vector (…, n) when 1-D or shaped as A without its last
    axis; batch axes broadcast. LinAlgError when A is singular ("The solver
    failed because the input matrix is singular."), ShapeError for shapes that
    do not fit, TypeError for non-float or mixed dtypes.

    >>> import lucid
    >>> lucid.linalg.solve(lucid.tensor([[2.0, 0.0], [0.0, 4.0]]), lucid.tensor([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    _tensor("linalg.solve", A)
    _tensor("linalg.solve", B, "B")
    _bool("linalg.solve", left, "left")
    return _C.autograd_solve(A, B, left)  # the kernel and (when recording) SolveBackward: one C++ call


# ----- det / slogdet / logdet ------------------------------------------------------------------
class _Det(Function):
    @staticmethod
    def backward(ctx, g):
        # Saved: (A, det A). d det(A) = tr(adj(A) dA): gA = g adj(A)^T, which is g det(A) A^-T for an
        # invertible A. When some matrix of the batch is singular, the cofactors
        # come from the SVD instead: with A = U S V^T,
        # adj(A)^T = det(U) det(V) U diag(prod_{j != i} s_j) V^T.
        a, d = ctx.saved_tensors
        try:
            return _scale_matrices(g * d, _mT(inv(a)))
        except LinAlgError:
            pass
        u, s, vh = svd(a, full_matrices=False)
        n = s.shape[-1]
        others = where(_eye(s, n) > 0, 1.0, shape.unsqueeze(s, -2)).prod(-1)  # prod_{j != i} s_j
        signs = det(u) * det(vh)
        return _scale_matrices(g * signs, matmul(u * shape.unsqueeze(others, -2), vh))


def det(A):
    """The determinant of each square matrix of ``A`` (…, n, n) -> (…).

    From the LU factorization (LAPACK getrf / mlx.core.linalg.det); 0 for a
    singular matrix. The gradient is g·adj(A)^T: g·det(A)·A^-T through A^-1,
    or, when a matrix of the batch is singular, the cofactors from the SVD
    (whose own gradient, for a second derivative, needs distinct singular values).

    >>> import lucid
    >>> lucid.det(lucid.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    -2.0...
    """
    _tensor("linalg.det", A)
    return _C.autograd_det(A)  # the kernel and (when recording) DetBackward: one C++ call


class _Slogdet(Function):
    @staticmethod
    def backward(ctx, g_sign, g_logabs):
        # d log|det A| = tr(A^-1 dA); the sign is piecewise constant.
        (a,) = ctx.saved_tensors
        if g_logabs is None:
            return None
        return _scale_matrices(g_logabs, _mT(inv(a)))


def slogdet(A):
    """``(sign, logabsdet)`` of each square matrix: det = sign * exp(logabsdet).

    A singular matrix gives (0, -inf). Only ``logabsdet`` has a gradient
    (A^-T times its upstream gradient; raises LinAlgError at a singular A).

    >>> import lucid
    >>> s, l = lucid.linalg.slogdet(lucid.tensor([[-2.0, 0.0], [0.0, 3.0]]))
    >>> s.item(), round(l.item(), 4)
    (-1.0, 1.7918)
    """
    _tensor("linalg.slogdet", A)
    return SlogdetResult(*_C.autograd_slogdet(A))  # the kernel and (when recording) SlogdetBackward


def logdet(input):
    """log(det A): NaN where det < 0, -inf where det = 0 (PyTorch's ``logdet``).

    >>> import lucid
    >>> round(lucid.logdet(lucid.tensor([[2.0, 0.0], [0.0, 3.0]])).item(), 4)
    1.7918
    """
    sign, logabs = slogdet(input)
    return logabs + log(sign)  # log(-1) = NaN, log(0) = -inf; the sign carries no gradient


# ----- cholesky --------------------------------------------------------------------------------
def _phi(x):
    """The lower triangle of x with its diagonal halved."""
    return shape.tril(x) - 0.5 * diag_embed(diagonal(x, 0, -2, -1))


class _Cholesky(Function):
    @staticmethod
    def backward(ctx, g):
        # A = L L^T: gA = sym(L^-T phi(L^T gL) L^-1), sym(S) = (S + S^T) / 2 (the
        # symmetric gradient, as PyTorch gives). upper: L = U^T, gL = gU^T.
        # Saved: (the factor); params: (upper).
        (f,) = ctx.saved_tensors
        low, gl = (_mT(f), _mT(g)) if ctx.params[0] else (f, g)
        p = _phi(matmul(_mT(low), gl))
        s = solve_triangular(_mT(low), p, upper=True)
        s = solve_triangular(low, s, upper=False, left=False)
        return 0.5 * (s + _mT(s))


def cholesky(A, upper=False):
    """The Cholesky factor of each symmetric positive-definite matrix of ``A``.

    ``L`` (lower, A = L L^T) from A's lower triangle, or with ``upper=True``
    ``U`` (A = U^T U) from its upper triangle; the other triangle is not read.
    LinAlgError naming the leading minor that is not positive-definite.

    >>> import lucid
    >>> lucid.linalg.cholesky(lucid.tensor([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    _tensor("linalg.cholesky", A)
    _bool("linalg.cholesky", upper, "upper")
    return _C.autograd_cholesky(A, upper)  # the kernel and (when recording) CholeskyBackward: one C++ call


# ----- eigh / eigvalsh -------------------------------------------------------------------------
def _gap_inverse(w):
    """F[…, i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it."""
    e = shape.unsqueeze(w, -2) - shape.unsqueeze(w, -1)
    n = w.shape[-1]
    eye = _eye(w, n)
    return where(eye > 0, 0.0 * e, 1.0 / (e + eye))


class _Eigh(Function):
    @staticmethod
    def backward(ctx, gw, gv):
        # A = V diag(w) V^T: gA = V (diag(gw) + F o skew(V^T gV)) V^T with
        # F_ij = 1 / (w_j - w_i): needs distinct eigenvalues.
        w, v = ctx.saved_tensors
        inner = 0.0
        if gw is not None:
            inner = diag_embed(gw)
        if gv is not None:
            vg = matmul(_mT(v), gv)
            inner = inner + _gap_inverse(w) * (0.5 * (vg - _mT(vg)))
        if not isinstance(inner, Tensor):
            return None, None
        return matmul(matmul(v, inner), _mT(v)), None


class _Eigvalsh(Function):
    @staticmethod
    def backward(ctx, gw):
        # V diag(gw) V^T. Saved: (A, V); params: (UPLO is 'U').
        a, v = ctx.saved_tensors
        if is_grad_enabled():  # create_graph: V as a recorded function of A
            v = eigh(a, "U" if ctx.params[0] else "L").eigenvectors
        return matmul(v * shape.unsqueeze(gw, -2), _mT(v))


def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices.

    Reads A's lower (``UPLO='L'``) or upper triangle. Eigenvectors are fixed up
    to sign, which may differ between the streams (LAPACK syevd and MLX).
    Gradient: needs distinct eigenvalues (it divides by their gaps).

    >>> import lucid
    >>> w, v = lucid.linalg.eigh(lucid.tensor([[2.0, 0.0], [0.0, 1.0]]))
    >>> w.tolist()
    [1.0, 2.0]
    """
    _tensor("linalg.eigh", A)
    _str("linalg.eigh", UPLO, "UPLO")
    return EighResult(*_C.autograd_eigh(A, UPLO))  # the kernel and (when recording) EighBackward


def eigvalsh(A, UPLO="L"):
    """The eigenvalues of symmetric matrices, ascending (see ``eigh``); gradient V diag(g) V^T.

    >>> import lucid
    >>> lucid.linalg.eigvalsh(lucid.tensor([[2.0, 1.0], [1.0, 2.0]])).tolist()
    [1.0, 3.0]
    """
    _tensor("linalg.eigvalsh", A)
    _str("linalg.eigvalsh", UPLO, "UPLO")
    return _C.autograd_eigvalsh(A, UPLO)  # the kernel and (when recording) EigvalshBackward: one C++ call


# ----- svd / svdvals ---------------------------------------------------------------------------
def _svd_grad(u, s, vh, gu, gs, gvh):
    """Gradient of A = U diag(S) Vh (reduced factors) for the given upstream
    gradients (None where an output is unused): Townsend's formula
    gA = U [(F o (U^T gU - gU^T U)) S + diag(gS) + S (F o (V^T gV - gV^T V))] Vh
         + (I - U U^T) gU S^-1 Vh + U S^-1 gV^T (I - V V^T),
    F_ij = 1 / (s_j^2 - s_i^2) off the diagonal."""
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    v = _mT(vh)
    inner = diag_embed(gs) if gs is not None else None
    if gu is None and gvh is None:
        return matmul(matmul(u, inner), vh)
    f = _gap_inverse(s * s)
    s_row = shape.unsqueeze(s, -2)  # multiplies columns: X S
    s_col = shape.unsqueeze(s, -1)  # multiplies rows: S X
    if gu is not None:
        ug = matmul(_mT(u), gu)
        term = (f * (ug - _mT(ug))) * s_row
        inner = term if inner is None else inner + term
    if gvh is not None:
        gv = _mT(gvh)
        vg = matmul(_mT(v), gv)
        term = s_col * (f * (vg - _mT(vg)))
        inner = term if inner is None else inner + term
    out = matmul(matmul(u, inner), vh)
    if gu is not None and m > k:  # the part of gU outside U's span
        gu_perp = gu - matmul(u, matmul(_mT(u), gu))
        out = out + matmul(gu_perp / s_row, vh)
    if gvh is not None and n > k:
        gv = _mT(gvh)
        gv_perp = gv - matmul(v, matmul(_mT(v), gv))
        out = out + matmul(u / s_row, _mT(gv_perp))
    return out


class _SVD(Function):
    @staticmethod
    def backward(ctx, gu, gs, gvh):
        u, s, vh = ctx.saved_tensors
        k = s.shape[-1]
        if ctx.params[0]:  # full_matrices: only the first k columns of U (rows of Vh) enter A
            m, n = u.shape[-2], vh.shape[-1]
            if m != n and ((gu is not None and _any_nonzero(gu[..., :, k:]))
                           or (gvh is not None and _any_nonzero(gvh[..., k:, :]))):
                raise NotImplementedError(
                    "linalg.svd: the gradient with full_matrices=True is defined for square inputs only (the "
                    "completed singular vectors are not unique); use full_matrices=False")
            u, vh = u[..., :, :k], vh[..., :k, :]
            gu = None if gu is None else gu[..., :, :k]
            gvh = None if gvh is None else gvh[..., :k, :]
        return _svd_grad(u, s, vh, gu, gs, gvh), None


def _any_nonzero(t):
    return t.numel() > 0 and bool((t != 0).any().item())


class _Svdvals(Function):
    @staticmethod
    def backward(ctx, gs):
        # U diag(gs) Vh. Saved: (A, U, Vh).
        a, u, vh = ctx.saved_tensors
        if is_grad_enabled():  # create_graph: U and Vh as recorded functions of A
            u, _, vh = svd(a, full_matrices=False)
        return matmul(u * shape.unsqueeze(gs, -2), vh)


def svd(A, full_matrices=True):
    """``(U, S, Vh)`` with A = U diag(S) Vh; S descending. A (…, m, n), k = min(m, n):
    U (…, m, m) and Vh (…, n, n) with ``full_matrices``, else (…, m, k) and (…, k, n).

    Singular vectors are fixed up to sign, which may differ between the streams
    (LAPACK gesdd, MLX). Gradient: needs distinct (and, for m != n, nonzero)
    singular values; with full_matrices=True only for square A, or when the
    completed columns get no gradient.

    >>> import lucid
    >>> lucid.linalg.svd(lucid.tensor([[3.0, 0.0], [0.0, -4.0]])).S.tolist()
    [4.0, 3.0]
    """
    _tensor("linalg.svd", A)
    _bool("linalg.svd", full_matrices, "full_matrices")
    return SVDResult(*_C.autograd_svd(A, full_matrices))  # the kernel and (when recording) SVDBackward


def svdvals(A):
    """The singular values of A, descending (…, min(m, n)); gradient U diag(g) Vh.

    >>> import lucid
    >>> lucid.linalg.svdvals(lucid.tensor([[3.0, 0.0], [0.0, -4.0]])).tolist()
    [4.0, 3.0]
    """
    _tensor("linalg.svdvals", A)
    return _C.autograd_svdvals(A)  # the kernel and (when recording) SvdvalsBackward: one C++ call


# ----- qr --------------------------------------------------------------------------------------
class _QR(Function):
    @staticmethod
    def backward(ctx, gq, gr):
        # m >= n, reduced: gA = [gQ + Q copyltu(M)] R^-T, M = R gR^T - gQ^T Q,
        # copyltu(M) the symmetric matrix with M's lower triangle.
        m, n = ctx.in_shape[-2], ctx.in_shape[-1]
        mode = ("reduced", "complete", "r")[ctx.params[0]]
        if mode == "r" or m < n or (mode == "complete" and m > n):
            raise NotImplementedError(
                "linalg.qr: the gradient is implemented for mode='reduced' (or 'complete' with m == n) and "
                f"inputs with m >= n; got mode={mode!r} and a {m} x {n} input")
        q, r = ctx.saved_tensors
        mm = 0.0
        if gr is not None:
            mm = matmul(r, _mT(gr))
        if gq is not None:
            mm = mm - matmul(_mT(gq), q)
        low = shape.tril(mm, -1)
        sym = low + _mT(low) + diag_embed(diagonal(mm, 0, -2, -1))
        b = matmul(q, sym)
        if gq is not None:
            b = b + gq
        return solve_triangular(_mT(r), b, upper=False, left=False), None


def qr(A, mode="reduced"):
    """``(Q, R)`` with A = Q R, Q orthonormal columns, R upper triangular.

    ``mode``: 'reduced' (Q (…, m, k), R (…, k, n), k = min(m, n)), 'complete'
    (Q (…, m, m), R (…, m, n)) or 'r' (R only; Q an empty tensor). Householder
    QR on both streams (LAPACK geqrf / orgqr, MLX). Gradient: mode 'reduced',
    m >= n, full-rank A.

    >>> import lucid
    >>> q, r = lucid.linalg.qr(lucid.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> [round(abs(x), 4) for x in r[0].tolist()]
    [5.0, 2.2]
    """
    _tensor("linalg.qr", A)
    _str("linalg.qr", mode, "mode")
    return QRResult(*_C.autograd_qr(A, mode))  # the kernel and (when recording) QRBackward


# ----- solve_triangular ------------------------------------------------------------------------
class _SolveTriangular(Function):
    @staticmethod
    def backward(ctx, g):
        # As solve's, with A^T triangular on the other side; gA keeps A's
        # triangle (without the diagonal when it is taken as ones).
        # Saved: (A, X); params: (upper, left, unitriangular); in_shape: B's shape.
        a, x = ctx.saved_tensors
        upper, left, unit = (bool(p) for p in ctx.params)
        gb = solve_triangular(_mT(a), g, upper=not upper, left=left, unitriangular=unit)
        ga = None
        if ctx.needs_input_grad[0]:
            ga = -(matmul(gb, _mT(x)) if left else matmul(_mT(x), gb))
            ga = shape.triu(ga, 1 if unit else 0) if upper else shape.tril(ga, -1 if unit else 0)
            ga = sum_to_shape(ga, a.shape)
        gb = sum_to_shape(gb, ctx.in_shape) if ctx.needs_input_grad[1] else None
        return ga, gb


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with ``A X = B`` (``left``) or ``X A = B`` for triangular A (…, n, n).

    Only A's ``upper`` (or lower) triangle is read; with ``unitriangular`` its
    diagonal is taken as ones. B (…, n, k) (left) or (…, k, n); batch axes
    broadcast. A zero diagonal element raises LinAlgError on both streams
    (PyTorch returns inf / NaN there).

    >>> import lucid
    >>> a = lucid.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> lucid.linalg.solve_triangular(a, lucid.tensor([[3.0], [4.0]]), upper=True).tolist()
    [[1.0], [1.0]]
    """
    fn = "linalg.solve_triangular"
    _tensor(fn, A)
    _tensor(fn, B, "B")
    _bool(fn, upper, "upper")
    _bool(fn, left, "left")
    _bool(fn, unitriangular, "unitriangular")
    # the kernel and (when recording) SolveTriangularBackward: one C++ call
    return _C.autograd_solve_triangular(A, B, upper, left, unitriangular)


_C._register_decomposition(_Inv, _Solve, _Det, _Cholesky, _Eigvalsh, _Svdvals, _SolveTriangular)


# ----- LU: lu_factor, lu, lu_solve -------------------------------------------------------------
LUFactorResult = namedtuple("lu_factor", ["LU", "pivots"])
LUResult = namedtuple("lu", ["P", "L", "U"])


def _permutation(pivots, m, like):
    """P (…, m, m) with A = P L U from LAPACK's 1-based row swaps (read on the host)."""
    piv = np.asarray(pivots.to("cpu").numpy(), dtype=np.int64) - 1
    batch = piv.shape[:-1]
    flat = piv.reshape(-1, piv.shape[-1])
    p = np.zeros((flat.shape[0], m, m))
    for b, swaps in enumerate(flat):
        perm = np.arange(m)
        for i, j in enumerate(swaps):
            perm[i], perm[j] = perm[j], perm[i]
        p[b, perm, np.arange(m)] = 1.0  # (P^T A)[i] = A[perm[i]]
    return _const(p.reshape(batch + (m, m)), like)


def _const(values, like):
    return tensor(values, dtype=like.dtype, device=like.device)


def _unpack(lu):
    """(L unit lower (…, m, k), U upper (…, k, n)) from a packed LU (…, m, n)."""
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    low = shape.tril(lu[..., :, :k], -1) + eye(m, k, dtype=lu.dtype, device=lu.device)
    up = shape.triu(lu[..., :k, :])
    return low, up


class _LUFactor(Function):
    @staticmethod
    def backward(ctx, g_lu, g_piv):
        # A = P L U (square): gA = P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T, with
        # gL, gU the strictly lower / upper parts of the packed gradient.
        lu, piv = ctx.saved_tensors
        m, n = lu.shape[-2], lu.shape[-1]
        if m != n:
            raise NotImplementedError(
                f"linalg.lu_factor: the gradient is implemented for square matrices; got {m} x {n}")
        low, up = _unpack(lu)
        phi = shape.tril(matmul(_mT(low), shape.tril(g_lu, -1)), -1) + shape.triu(matmul(shape.triu(g_lu), _mT(up)))
        x = solve_triangular(_mT(low), phi, upper=True, unitriangular=True)
        x = solve_triangular(_mT(up), x, upper=False, left=False)
        return matmul(_permutation(piv, m, lu), x), None


# These five record in C++ too (`_C.autograd_eigh` ..., csrc/autograd/decomposition.cpp:
# nodes of several outputs); their formulas here serve every order.
_C._register_decomposition_results(_Eigh, _Slogdet, _SVD, _QR, _LUFactor)


def lu_factor(A, *, pivot=True):
    """``(LU, pivots)``: P A = L U with partial pivoting, L (unit lower) and U packed in
    LU (…, m, n), pivots (…, min(m, n)) int32, 1-based row swaps (LAPACK's). A zero
    on U's diagonal raises LinAlgError (use ``lu`` to factor singular matrices).
    Gradient: square A.

    >>> import lucid
    >>> lu, piv = lucid.linalg.lu_factor(lucid.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> piv.tolist()
    [2, 2]
    """
    fn = "linalg.lu_factor"
    _tensor(fn, A)
    _bool(fn, pivot, "pivot")
    if not pivot:
        raise NotImplementedError(f"{fn}: LU without pivoting is not implemented (LAPACK and MLX always pivot)")
    return LUFactorResult(*_C.autograd_lu_factor(A, True))  # the kernel and (when recording) LUFactorBackward


def lu(A, *, pivot=True):
    """``(P, L, U)`` with A = P L U: P (…, m, m) a permutation, L (…, m, k) unit lower,
    U (…, k, n) upper, k = min(m, n); singular matrices too. Gradient: square A.

    >>> import lucid
    >>> p, l, u = lucid.linalg.lu(lucid.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> (p @ l @ u).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    fn = "linalg.lu"
    _tensor(fn, A)
    _bool(fn, pivot, "pivot")
    if not pivot:
        raise NotImplementedError(f"{fn}: LU without pivoting is not implemented (LAPACK and MLX always pivot)")
    packed, piv = _C.autograd_lu_factor(A, False)
    low, up = _unpack(packed)
    return LUResult(_permutation(piv, A.shape[-2], packed), low, up)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with ``A X = B`` from ``(LU, pivots) = lu_factor(A)`` (``adjoint``: A^T X = B;
    ``left=False``: X A = B). Composed from triangular solves, so it is
    differentiable in B and in LU.

    >>> import lucid
    >>> a = lucid.tensor([[2.0, 0.0], [1.0, 4.0]])
    >>> lucid.linalg.lu_solve(*lucid.linalg.lu_factor(a), lucid.tensor([[2.0], [9.0]])).tolist()
    [[1.0], [2.0]]
    """
    fn = "linalg.lu_solve"
    _tensor(fn, LU, "LU")
    _tensor(fn, pivots, "pivots")
    _tensor(fn, B, "B")
    _bool(fn, left, "left")
    _bool(fn, adjoint, "adjoint")
    if LU.ndim < 2 or LU.shape[-1] != LU.shape[-2]:
        dims = tuple(LU.shape[-2:])
        raise ShapeError(f"{fn}: A must be batches of square matrices, got LU of shape {tuple(LU.shape)}"
                         if len(dims) < 2 else
                         f"{fn}: A must be batches of square matrices, but they are {dims[0]} by {dims[1]} matrices")
    n = LU.shape[-1]
    if tuple(pivots.shape) != tuple(LU.shape[:-1]) or pivots.dtype.name != "int32":
        raise ValueError(f"{fn}: expected pivots of shape {tuple(LU.shape[:-1])} and dtype int32 (from lu_factor), "
                         f"got {tuple(pivots.shape)} {pivots.dtype.name}")
    if B.ndim < 2 or (B.shape[-2] if left else B.shape[-1]) != n:
        raise ShapeError(f"{fn}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
                         f"({n}x{n} and {'x'.join(str(d) for d in B.shape[-2:])})")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _mT(lu_solve(LU, pivots, _mT(B), left=True, adjoint=not adjoint))
    low, up = _unpack(LU)
    p = _permutation(pivots, n, LU)
    if not adjoint:  # P L U X = B
        y = solve_triangular(low, matmul(_mT(p), B), upper=False, unitriangular=True)
        return solve_triangular(up, y, upper=True)
    # U^T L^T P^T X = B
    y = solve_triangular(_mT(up), B, upper=False)
    return matmul(p, solve_triangular(_mT(low), y, upper=True, unitriangular=True))
