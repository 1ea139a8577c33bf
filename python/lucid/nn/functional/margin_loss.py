"""Margin, ranking and embedding losses of ``lucid.nn.functional`` (PyTorch's
signatures, defaults and reductions): margin_ranking, triplet_margin (and with
any distance), cosine_embedding, hinge_embedding, soft_margin,
multilabel_soft_margin, multi_margin and multilabel_margin, composed from lucid
ops so autograd differentiates them on either stream."""
from __future__ import annotations

import numbers

import numpy as np

import lucid._namespace as lucid

from .activation import logsigmoid, softplus
from .distance import pairwise_distance
from .loss import _check_real, _check_reduction, _legacy, _reduce, _reduce_checked


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)`` (inputs broadcast; all of one
    number of dimensions, as PyTorch).

    >>> import lucid
    >>> F = lucid.nn.functional
    >>> F.margin_ranking_loss(lucid.tensor([1.0, 2.0]), lucid.tensor([2.0, 0.0]), lucid.tensor([1.0, 1.0]),
    ...                       reduction="none").tolist()
    [1.0, 0.0]
    """
    fn = "margin_ranking_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction, fn)
    _check_real(margin, fn, "margin")
    if not (input1.ndim == input2.ndim == target.ndim):
        raise ValueError(f"{fn}(): input1, input2 and target must have one number of dimensions, got shapes "
                         f"{tuple(input1.shape)}, {tuple(input2.shape)}, {tuple(target.shape)}")
    loss = lucid.clamp(-target * (input1 - input2) + margin, min=0.0)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``pairwise_distance``
    (``||x - y + eps||_p`` on the last axis); ``swap`` uses ``min(d(a, n), d(p, n))``
    as the negative distance. ``margin`` must be positive.

    >>> import lucid
    >>> a, p, n = lucid.tensor([[0.0, 0.0]]), lucid.tensor([[3.0, 4.0]]), lucid.tensor([[0.0, 1.0]])
    >>> round(lucid.nn.functional.triplet_margin_loss(a, p, n, eps=0.0).item(), 4)
    5.0
    """
    fn = "triplet_margin_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction, fn)
    _check_real(margin, fn, "margin")
    if margin <= 0:
        raise ValueError(f"{fn}(): argument 'margin' must be greater than 0, got {margin}")
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise ValueError(f"{fn}(): anchor, positive and negative must have one number of dimensions, got "
                         f"{anchor.ndim}-D, {positive.ndim}-D and {negative.ndim}-D")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = lucid.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(lucid.clamp(d_pos - d_neg + margin, min=0.0), reduction)


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


# PyTorch's constant in cosine_embedding_loss: added to each squared norm.
_COS_EPS = 1e-12


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1`` (0 for other targets), with ``cos = x1.x2 / sqrt((|x1|^2 + 1e-12)
    (|x2|^2 + 1e-12))`` over the last axis. Inputs (N, D) (broadcasting) with target
    (N,), or (D,) with ().

    >>> import lucid
    >>> x = lucid.tensor([[1.0, 0.0]])
    >>> lucid.nn.functional.cosine_embedding_loss(x, x, lucid.tensor([-1.0])).item()
    1.0
    """
    fn = "cosine_embedding_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction, fn)
    _check_real(margin, fn, "margin")
    if target.ndim not in (0, 1):
        raise ValueError(f"{fn}(): expected a 0-D or 1-D target, got shape {tuple(target.shape)}")
    if input1.ndim != target.ndim + 1 or input2.ndim != target.ndim + 1:
        raise ValueError(f"{fn}(): a {target.ndim}-D target expects {target.ndim + 1}-D input1 and input2, got "
                         f"shapes {tuple(input1.shape)} and {tuple(input2.shape)}")
    dot = lucid.sum(input1 * input2, dim=-1)
    m1 = lucid.sum(input1 * input1, dim=-1) + _COS_EPS
    m2 = lucid.sum(input2 * input2, dim=-1) + _COS_EPS
    cos = dot / lucid.sqrt(m1 * m2)
    loss = (lucid.where(target == 1, 1.0 - cos, 0.0)
            + lucid.where(target == -1, lucid.clamp(cos - margin, min=0.0), 0.0))
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))`` (input and target broadcast), as
    ``softplus(-target * input)`` (no overflow for large margins, where PyTorch's
    ``log1p(exp(.))`` reaches inf).

    >>> import lucid
    >>> round(lucid.nn.functional.soft_margin_loss(lucid.tensor([0.0]), lucid.tensor([1.0])).item(), 4)
    0.6931
    """
    fn = "soft_margin_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction, fn)
    return _reduce(softplus(-(target * input)), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """``-(t log sigmoid(x) + (1 - t) log sigmoid(-x))`` times ``weight``, averaged over
    the class (last) axis (input and target broadcast); then reduced over the samples.

    >>> import lucid
    >>> round(lucid.nn.functional.multilabel_soft_margin_loss(lucid.zeros(1, 2), lucid.ones(1, 2)).item(), 4)
    0.6931
    """
    fn = "multilabel_soft_margin_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction, fn)
    if input.ndim == 0:
        raise ValueError(f"{fn}(): expected an input of shape (C,) or (N, C), got a 0-d tensor")
    loss = -(target * logsigmoid(input) + (1.0 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = lucid.sum(loss, dim=-1) / input.shape[-1]
    return _reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``
    (as PyTorch, a target that is neither counts both terms).

    >>> import lucid
    >>> lucid.nn.functional.hinge_embedding_loss(lucid.tensor([0.3, 0.3]), lucid.tensor([1.0, -1.0]),
    ...                                          reduction="none").tolist()
    [0.30000001192092896, 0.699999988079071]
    """
    fn = "hinge_embedding_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction, fn)
    _check_real(margin, fn, "margin")
    loss = (lucid.where(target != 1, lucid.clamp(margin - input, min=0.0), 0.0)
            + lucid.where(target != -1, input, 0.0))
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss: per sample ``sum_{j != y} w[y] max(0, margin - x[y] + x[j])^p / C``
    with input (N, C) or (C,), target (N,) or () class indices, ``p`` 1 or 2.

    >>> import lucid
    >>> round(lucid.nn.functional.multi_margin_loss(lucid.tensor([[0.1, 0.2, 0.4, 0.8]]), lucid.tensor([3])).item(), 4)
    0.325
    """
    fn = "multi_margin_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction, fn)
    if p not in (1, 2) or isinstance(p, bool):
        raise ValueError(f"{fn}(): argument 'p' must be 1 or 2, got {p!r}")
    _check_real(margin, fn, "margin")
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise ValueError(f"{fn}(): expected a non-empty input of shape (C,) or (N, C), got {tuple(input.shape)}")
    if tuple(target.shape) != tuple(input.shape[:-1]):
        raise ValueError(f"{fn}(): expected target of shape {tuple(input.shape[:-1])} for input of shape "
                         f"{tuple(input.shape)}, got {tuple(target.shape)}")
    if target.dtype.is_floating_point:
        raise TypeError(f"{fn}(): target must be an integer tensor of class indices, got {target.dtype}")
    c = input.shape[-1]
    if weight is not None and tuple(weight.shape) != (c,):
        raise ValueError(f"{fn}(): argument 'weight' must have shape ({c},), got {tuple(weight.shape)}")
    if target.numel() and bool(lucid.any(lucid.logical_or(target < 0, target >= c))):
        raise IndexError(f"{fn}(): target values must lie in [0, {c})")
    onehot = (lucid.unsqueeze(target, -1) == lucid.arange(c, device=target.device)).to(input.dtype)
    x_y = lucid.sum(lucid.where(onehot != 0, input, 0.0), dim=-1, keepdim=True)
    z = lucid.clamp(input - x_y + margin, min=0.0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * lucid.sum(onehot * weight, dim=-1, keepdim=True)
    loss = lucid.sum(lucid.where(onehot != 0, 0.0, z), dim=-1) / c
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C``
    per sample; ``target`` (N, C) (or (C,)) lists the target classes, ended by the first -1."""
    fn = "multilabel_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = "sum" if size_average is False and reduce is not False else \
            ("none" if reduce is False else "mean")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if input.ndim not in (1, 2) or tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{fn}(): expected input and target of one shape (N, C) or (C,), got {tuple(input.shape)} "
                         f"and {tuple(target.shape)}")
    n, c = x.shape
    t = np.asarray(target.to("cpu").numpy(), dtype=np.int64).reshape(n, c)
    is_target = np.zeros((n, c), dtype=bool)
    for row in range(n):
        for j in t[row]:
            if j == -1:
                break
            if not 0 <= j < c:
                raise IndexError(f"{fn}(): target class {j} is out of range for {c} classes")
            is_target[row, j] = True
    pairs = lucid.tensor(is_target[:, :, None] & ~is_target[:, None, :], device=x.device)
    hinge = lucid.relu(1.0 - (x.unsqueeze(2) - x.unsqueeze(1)))  # [n, j, i]: 1 - (x_j - x_i)
    loss = lucid.sum(lucid.where(pairs, hinge, 0.0), dim=(1, 2)) / float(c)
    if input.ndim == 1:
        loss = loss.reshape(())
    return _reduce_checked(loss, reduction, fn)


__all__ = ["margin_ranking_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "cosine_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss", "hinge_embedding_loss",
           "multi_margin_loss", "multilabel_margin_loss"]
