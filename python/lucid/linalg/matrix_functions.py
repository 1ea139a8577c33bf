"""Functions of matrices composed from the decompositions (decomposition.py), matmul
and elementwise ops, so they run on either stream and are differentiable through
those: the pseudo-inverse pinv, matrix_power (also ``lucid.matrix_power`` and the
Tensor method), matrix_exp, and matrix_rank / cond (from the singular values).
"""
from __future__ import annotations

import math
import numbers

from .._C import ShapeError
from .._ops import shape
from .._ops.elementwise import where
from .._ops.linalg import matmul
from .._ops.norms import matrix_norm
from .decomposition import _bool, _eye, _mT, _tensor, eigh, eigvalsh, inv, solve, svd, svdvals

__all__ = ["matrix_power"]
TENSOR_METHODS = list(__all__)


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse from the SVD (or eigh with ``hermitian``):
    V diag(1/s) U^T over singular values s > max(atol, rtol * s_max); the rest
    count as zero. Default rtol: eps * max(m, n) when atol is not given, else 0.
    Composed from svd / eigh, so its gradient needs distinct singular values.

    >>> import lucid
    >>> lucid.linalg.pinv(lucid.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    fn = "linalg.pinv"
    _tensor(fn, A)
    _bool(fn, hermitian, "hermitian")
    if A.ndim < 2:
        raise ShapeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    rtol, atol = _tolerances(fn, A, atol, rtol)
    if hermitian:
        w, v = eigh(A)
        mag = w.abs()
        smax = mag.amax(-1, keepdim=True) if w.numel() else mag
        keep = mag > _max(atol, rtol * smax)
        winv = where(keep, 1.0 / where(keep, w, 1.0), 0.0)
        return matmul(v * shape.unsqueeze(winv, -2), _mT(v))
    u, s, vh = svd(A, full_matrices=False)
    smax = s.amax(-1, keepdim=True) if s.numel() else s
    keep = s > _max(atol, rtol * smax)
    sinv = where(keep, 1.0 / where(keep, s, 1.0), 0.0)
    return matmul(_mT(vh) * shape.unsqueeze(sinv, -2), _mT(u))


def _max(c, t):
    """max(c, t) for a number c and a tensor t."""
    return where(t > c, t, c)


def matrix_power(A, n):
    """A^n by repeated squaring for square matrices (…, m, m); n an int, n < 0 uses inv(A).

    >>> import lucid
    >>> lucid.linalg.matrix_power(lucid.tensor([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    fn = "linalg.matrix_power"
    _tensor(fn, A)
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"{fn}: argument 'n' must be an int, got {type(n).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"{fn}: A must be batches of square matrices, got shape {tuple(A.shape)}")
    if n == 0:
        eye = _eye(A, A.shape[-1])
        return eye.expand(*A.shape) * 1  # a new tensor, as PyTorch's
    base = inv(A) if n < 0 else A
    n = abs(int(n))
    result = None
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values (|eigenvalues| with ``hermitian``) above
    max(atol, rtol * s_max), per matrix, as int64; tolerances as in ``pinv``.
    No gradient (an integer).

    >>> import lucid
    >>> lucid.linalg.matrix_rank(lucid.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
    1
    """
    fn = "linalg.matrix_rank"
    _tensor(fn, A)
    _bool(fn, hermitian, "hermitian")
    if A.ndim < 2:
        raise ShapeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    rtol, atol = _tolerances(fn, A, atol, rtol)
    s = eigvalsh(A).abs() if hermitian else svdvals(A)
    smax = s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)
    return (s > _max(atol, rtol * smax)).sum(-1)


def _tolerances(fn, A, atol, rtol):
    for name, v in (("atol", atol), ("rtol", rtol)):
        if v is not None and not isinstance(v, numbers.Real):
            raise TypeError(f"{fn}: argument '{name}' must be a float or None, got {type(v).__name__}")
    if rtol is None:
        eps = 2.220446049250313e-16 if A.dtype.name == "float64" else 1.1920928955078125e-07
        rtol = eps * max(A.shape[-2], A.shape[-1]) if atol is None or atol <= 0 else 0.0
    return float(rtol), 0.0 if atol is None else float(atol)


def cond(A, p=None):
    """The condition number: with ``p`` None / 2 / -2 the ratio of the largest to the
    smallest singular value (-2: its inverse); with 'fro', 'nuc', 1, -1, inf, -inf
    ``norm(A, p) * norm(inv(A), p)`` (square, invertible A).

    >>> import lucid
    >>> lucid.linalg.cond(lucid.tensor([[2.0, 0.0], [0.0, 0.5]])).item()
    4.0
    """
    fn = "linalg.cond"
    _tensor(fn, A)
    if A.ndim < 2:
        raise ShapeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if p is None or p == 2 or p == -2:
        s = svdvals(A)
        hi, lo = s[..., 0], s[..., -1]
        return lo / hi if p == -2 else hi / lo
    if p not in ("fro", "nuc", 1, -1, math.inf, -math.inf):
        raise ValueError(f"{fn}: unsupported 'p' {p!r}: expected None, 2, -2, 'fro', 'nuc', 1, -1, inf or -inf")
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


# Padé (6, 6) coefficients c_k = (12 - k)! 6! / (12! k! (6 - k)!) of exp.
_PADE6 = [1.0, 1.0 / 2, 5.0 / 44, 1.0 / 66, 1.0 / 792, 1.0 / 15840, 1.0 / 665280]


def matrix_exp(A):
    """The matrix exponential of square matrices (…, n, n): scaling and squaring
    with the (6, 6) Padé approximant, so A / 2^s has norm at most 1/2 (error
    below float64's rounding there), composed from matmul and solve, and
    differentiable through them.

    >>> import lucid
    >>> lucid.linalg.matrix_exp(lucid.tensor([[0.0, 1.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    fn = "linalg.matrix_exp"
    _tensor(fn, A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"{fn}: A must be batches of square matrices, got shape {tuple(A.shape)}")
    if A.numel() == 0:
        return A * 1
    # One scaling for the whole batch, from the largest 1-norm (host read).
    norm1 = float(A.detach().abs().sum(-2).amax().item())
    if not math.isfinite(norm1):
        squarings = 0
    else:
        squarings = max(0, int(math.ceil(math.log2(norm1 / 0.5))) if norm1 > 0.5 else 0)
    x = A * (0.5 ** squarings) if squarings else A
    eye = _eye(A, A.shape[-1])
    even, odd = eye * _PADE6[0], None
    power = eye
    for k in range(1, 7):
        power = x if k == 1 else matmul(power, x)
        term = power * _PADE6[k]
        if k % 2:
            odd = term if odd is None else odd + term
        else:
            even = even + term
    out = solve(even - odd, even + odd)  # D(x)^-1 N(x), D(x) = N(-x)
    for _ in range(squarings):
        out = matmul(out, out)
    return out
