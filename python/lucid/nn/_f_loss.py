"""Losses of ``lucid.nn.functional`` beyond cross-entropy / nll / mse / l1:
binary cross-entropy (on probabilities and on logits), smooth L1, Huber, KL divergence."""
from __future__ import annotations

import lucid

from ..amp.autocast_mode import _state as _amp, upper as _amp_upper
from ._f_activation import softplus
from .functional import _check_reduction, _reduce


def _same_shape(input, target, fn):
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{fn}(): input and target must have one shape, got {tuple(input.shape)} and "
                         f"{tuple(target.shape)}")


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """``-weight * (t log(p) + (1 - t) log(1 - p))`` with each log clamped at -100
    (as PyTorch, so p = 0 or 1 gives a finite loss).

    >>> import lucid
    >>> round(lucid.nn.functional.binary_cross_entropy(lucid.tensor([0.5]), lucid.tensor([1.0])).item(), 4)
    0.6931
    """
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py): float32 list
        input, target, weight = _amp_upper(input, target, weight)
    fn = "binary_cross_entropy"
    _check_reduction(reduction, fn)
    _same_shape(input, target, fn)
    log_p = lucid.clamp(lucid.log(input), min=-100.0)
    log_q = lucid.clamp(lucid.log(1.0 - input), min=-100.0)
    loss = -(target * log_p + (1.0 - target) * log_q)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):
    """``(1 - t) x + (1 + (pos_weight - 1) t) * softplus(-x)``, times ``weight``: BCE on
    ``sigmoid(x)`` without overflow. ``pos_weight`` broadcasts along the last axis.

    >>> import lucid
    >>> round(lucid.nn.functional.binary_cross_entropy_with_logits(lucid.tensor([0.0]), lucid.tensor([1.0])).item(), 4)
    0.6931
    """
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py): float32 list
        input, target, weight, pos_weight = _amp_upper(input, target, weight, pos_weight)
    fn = "binary_cross_entropy_with_logits"
    _check_reduction(reduction, fn)
    _same_shape(input, target, fn)
    sp = softplus(-input)
    if pos_weight is not None:
        loss = (1.0 - target) * input + (1.0 + (pos_weight - 1.0) * target) * sp
    else:
        loss = (1.0 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - beta / 2`` (``d = input - target``;
    ``beta = 0`` is L1).

    >>> import lucid
    >>> lucid.nn.functional.smooth_l1_loss(lucid.tensor([0.5, 3.0]), lucid.zeros(2), reduction="none").tolist()
    [0.125, 2.5]
    """
    fn = "smooth_l1_loss"
    _check_reduction(reduction, fn)
    _same_shape(input, target, fn)
    if beta < 0:
        raise ValueError(f"{fn}(): argument 'beta' must be non-negative, got {beta}")
    d = lucid.abs(input - target)
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(lucid.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """``0.5 d^2`` where ``|d| <= delta``, else ``delta (|d| - delta / 2)``.

    >>> import lucid
    >>> lucid.nn.functional.huber_loss(lucid.tensor([0.5, 3.0]), lucid.zeros(2), reduction="none", delta=2.0).tolist()
    [0.125, 4.0]
    """
    fn = "huber_loss"
    _check_reduction(reduction, fn)
    _same_shape(input, target, fn)
    if delta <= 0:
        raise ValueError(f"{fn}(): argument 'delta' must be positive, got {delta}")
    d = lucid.abs(input - target)
    return _reduce(lucid.where(d <= delta, d * d * 0.5, (d - 0.5 * delta) * delta), reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence with ``input`` as log-probabilities: ``t (log t - input)`` (0 where
    ``t = 0``), or ``exp(t) (t - input)`` with ``log_target``. ``reduction='batchmean'``
    divides the sum by the batch size (the mathematically right mean).

    >>> import lucid
    >>> lucid.nn.functional.kl_div(lucid.tensor([0.0]), lucid.tensor([1.0]), reduction="sum").item()
    0.0
    """
    fn = "kl_div"
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{fn}(): argument 'reduction' must be one of ('none', 'mean', 'sum', 'batchmean'), "
                         f"got '{reduction}'")
    if log_target:
        loss = lucid.exp(target) * (target - input)
    else:
        positive = target > 0
        safe = lucid.where(positive, target, 1.0)
        loss = lucid.where(positive, target * (lucid.log(safe) - input), 0.0)
    if reduction == "batchmean":
        return lucid.sum(loss) / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "kl_div"]
