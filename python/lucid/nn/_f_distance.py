"""``pdist`` and ``triplet_margin_with_distance_loss`` for ``lucid.nn.functional``,
composed from lucid ops (both streams, differentiable)."""
from __future__ import annotations

import numbers

import lucid

from ._f_normalization import pairwise_distance
from .functional import _check_reduction, _reduce

__all__ = ["pdist", "triplet_margin_with_distance_loss"]


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
    return lucid.linalg.vector_norm(diff, float(p), dim=-1)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with any ``distance_function`` (default
    ``pairwise_distance``); ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance.

    >>> import lucid
    >>> a, p, n = lucid.tensor([[0.0, 0.0]]), lucid.tensor([[3.0, 4.0]]), lucid.tensor([[0.0, 1.0]])
    >>> l1 = lambda x, y: (x - y).abs().sum(-1)
    >>> lucid.nn.functional.triplet_margin_with_distance_loss(a, p, n, distance_function=l1).item()
    7.0
    """
    fn = "triplet_margin_with_distance_loss"
    _check_reduction(reduction, fn)
    if not isinstance(margin, numbers.Real) or isinstance(margin, bool) or not margin > 0:
        raise ValueError(f"{fn}(): argument 'margin' must be greater than 0, got {margin!r}")
    if distance_function is not None and not callable(distance_function):
        raise TypeError(f"{fn}(): argument 'distance_function' must be callable, got "
                        f"{type(distance_function).__name__}")
    for name, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        if not isinstance(t, lucid.Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be a tensor, got {type(t).__name__}")
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise ValueError(f"{fn}(): anchor, positive and negative must have one number of dimensions, got "
                         f"{anchor.ndim}-D, {positive.ndim}-D and {negative.ndim}-D")
    dist = pairwise_distance if distance_function is None else distance_function
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = lucid.minimum(d_neg, dist(positive, negative))
    return _reduce(lucid.clamp(d_pos - d_neg + margin, min=0.0), reduction)
