"""Distances and similarities of ``lucid.nn.functional``: cosine_similarity,
pairwise_distance and pdist (p-norms along an axis), composed from lucid ops
(both streams, differentiable)."""
from __future__ import annotations

import numbers

import lucid._namespace as lucid
from ..._ops.norms import vector_norm


def _norm(x, p, dim):
    if p == 2:
        return lucid.sqrt(lucid.sum(x * x, dim=dim, keepdim=True))
    if p == 1:
        return lucid.sum(lucid.abs(x), dim=dim, keepdim=True)
    if p == float("inf"):
        return lucid.amax(lucid.abs(x), dim=dim, keepdim=True)
    return lucid.sum(lucid.abs(x) ** p, dim=dim, keepdim=True) ** (1.0 / p)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` (inputs broadcast).

    >>> import lucid
    >>> lucid.nn.functional.cosine_similarity(lucid.tensor([[1.0, 0.0]]), lucid.tensor([[1.0, 1.0]])).tolist()
    [0.7071067690849304]
    """
    n1 = lucid.clamp(_norm(x1, 2, dim), min=eps)
    n2 = lucid.clamp(_norm(x2, 2, dim), min=eps)
    return lucid.sum((x1 / n1) * (x2 / n2), dim=dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` along the last axis."""
    out = _norm(x1 - x2 + eps, p, -1)
    return out if keepdim else out.squeeze(-1)


def pdist(input, p=2.0):
    """The p-norm distances between every pair of rows ``i < j`` of an (N, M) input, in
    row-major order of the pairs: shape (N (N - 1) / 2,). The gradient at a zero distance
    is 0 (as PyTorch).

    >>> import lucid
    >>> lucid.nn.functional.pdist(lucid.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).tolist()
    [5.0, 1.0, 4.242640495300293]
    """
    fn = "pdist"
    if not isinstance(input, lucid.Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a tensor, got {type(input).__name__}")
    if input.ndim != 2:
        raise ValueError(f"{fn}(): expected a 2-D input (N, M), got shape {tuple(input.shape)}")
    if not input.dtype.is_floating_point:
        raise TypeError(f"{fn}(): argument 'input' must be a floating-point tensor, got {input.dtype}")
    if not isinstance(p, numbers.Real) or isinstance(p, bool) or not p >= 0:
        raise ValueError(f"{fn}(): argument 'p' must be a non-negative number, got {p!r}")
    n = input.shape[0]
    if n < 2:
        return lucid.zeros(0, dtype=input.dtype, device=input.device) + input.sum() * 0.0
    rows, cols = lucid.triu_indices(n, n, 1).to(input.device)
    diff = lucid.index_select(input, 0, rows) - lucid.index_select(input, 0, cols)
    return vector_norm(diff, float(p), dim=-1)


__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]
