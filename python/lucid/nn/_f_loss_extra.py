"""Margin, embedding and likelihood losses of ``lucid.nn.functional`` (PyTorch's
signatures, defaults and reductions), composed from lucid ops so autograd
differentiates them on either stream: margin_ranking, triplet_margin,
cosine_embedding, soft_margin, multilabel_soft_margin, hinge_embedding,
poisson_nll, gaussian_nll, multi_margin."""
from __future__ import annotations

import math
import numbers

import lucid

from ._f_activation import logsigmoid, softplus
from ._f_normalization import pairwise_distance
from .functional import _check_reduction, _reduce


def _legacy(size_average, reduce, reduction):
    """PyTorch's deprecated ``size_average`` / ``reduce`` flags, when given, decide the
    reduction (each defaults to True): reduce=False is 'none', else size_average picks
    'mean' or 'sum'."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else ("mean" if size_average else "sum")


def _as_tensor(x, fn, name):
    if isinstance(x, lucid.Tensor):
        return x
    raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, got {type(x).__name__}")


def _check_real(value, fn, name):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' must be a number, got {type(value).__name__}")


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


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Poisson negative log-likelihood: ``exp(input) - target * input`` (``log_input``),
    else ``input - target * log(input + eps)``; ``full`` adds Stirling's term
    ``t log t - t + log(2 pi t) / 2`` where ``target > 1``.

    >>> import lucid
    >>> lucid.nn.functional.poisson_nll_loss(lucid.tensor([0.0]), lucid.tensor([2.0])).item()
    1.0
    """
    fn = "poisson_nll_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction, fn)
    if log_input:
        loss = lucid.exp(input) - target * input
    else:
        loss = input - target * lucid.log(input + eps)
    if full:
        big = target > 1
        t = lucid.where(big, target, 2.0)  # a safe value where the term is not used (no log(0) in the gradient)
        stirling = t * lucid.log(t) - t + 0.5 * lucid.log(t * (2.0 * math.pi))
        loss = loss + lucid.where(big, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log-likelihood ``(log(var) + (input - target)^2 / var) / 2``
    (plus ``log(2 pi) / 2`` with ``full``). ``var`` has the input's shape, or one
    dimension less (the last), or one dimension of size 1 where the input's differs
    (homoscedastic), or is a float. It is clamped at ``eps`` for the value only: the
    gradient passes the clamp unchanged, as PyTorch's no_grad clamp. ValueError for a
    negative entry.

    >>> import lucid
    >>> lucid.nn.functional.gaussian_nll_loss(lucid.tensor([1.0]), lucid.tensor([3.0]), lucid.tensor([1.0])).item()
    2.0
    """
    fn = "gaussian_nll_loss"
    if isinstance(var, numbers.Real) and not isinstance(var, bool):
        if var < 0:
            raise ValueError(f"{fn}(): argument 'var' has negative entry/entries, got {var}")
        var = lucid.full(tuple(input.shape), float(var), dtype=input.dtype, device=input.device)
    var = _as_tensor(var, fn, "var")
    if bool(lucid.any(var < 0)):
        raise ValueError(f"{fn}(): argument 'var' has negative entry/entries")
    ishape, vshape = tuple(input.shape), tuple(var.shape)
    if vshape != ishape:
        if ishape[:-1] == vshape:
            var = lucid.unsqueeze(var, -1)
        elif not (len(ishape) == len(vshape) and sum(v for i, v in zip(ishape, vshape) if i != v) == 1):
            raise ValueError(f"{fn}(): argument 'var' is of incorrect size {vshape} for input of shape {ishape}: "
                             f"expected the input's shape, its shape without the last dimension, or one "
                             f"dimension of size 1")
    _check_reduction(reduction, fn)
    # The clamped value, with var's gradient passed through unchanged (var - var.detach() is an exact 0).
    var = lucid.clamp(var, min=eps).detach() + (var - var.detach())
    d = input - target
    loss = 0.5 * (lucid.log(var) + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
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


__all__ = ["margin_ranking_loss", "triplet_margin_loss", "cosine_embedding_loss", "soft_margin_loss",
           "multilabel_soft_margin_loss", "hinge_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss",
           "multi_margin_loss"]
