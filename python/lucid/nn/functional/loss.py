"""Losses of ``lucid.nn.functional`` that score a prediction against a target
value or distribution: cross_entropy, nll_loss, the binary cross-entropies,
kl_div, the regression losses (mse, l1, smooth_l1, huber), the likelihood losses
(poisson_nll, gaussian_nll) and ctc_loss; with the reduction helpers every loss
shares. (The margin and embedding losses are in ``margin_loss``.)

cross_entropy with class-index targets runs and records in C++ (one call); the
rest are compositions of lucid ops, so autograd differentiates them on either
stream. ctc_loss runs the CTC forward recursion in log space over the
blank-extended labels (length 2S + 1) for the whole batch at once, one
``logsumexp`` step per time step (its gradient equals the usual alpha-beta form).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

import lucid._namespace as lucid

from ... import _C
from ..._ops.autocast import autocast_op
from ...autograd.function import Function
from .activation import log_softmax, softplus


_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction, fn):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}(): argument 'reduction' must be one of {_REDUCTIONS}, got '{reduction}'")


def _reduce(loss, reduction):
    if reduction == "mean":
        return lucid.mean(loss)
    if reduction == "sum":
        return lucid.sum(loss)
    return loss


# ctc_loss and multilabel_margin_loss check the mode as they reduce, with their own message.
def _reduce_checked(loss, reduction, fn):
    if reduction == "mean":
        return lucid.mean(loss)
    if reduction == "sum":
        return lucid.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{fn}(): argument 'reduction' must be 'mean', 'sum' or 'none', got {reduction!r}")


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


def _class_layout(input, target, fn):
    """Checks (N, C, *) vs (N, *) shapes (or (C,) vs ()); returns the class axis size."""
    if input.ndim == 1:
        if target.ndim != 0:
            raise ValueError(f"{fn}(): expected a 0-d target for a 1-D input of shape {tuple(input.shape)}, "
                             f"got target shape {tuple(target.shape)}")
        return input.shape[0]
    if input.ndim < 1 or tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise ValueError(f"{fn}(): expected target of shape {(input.shape[0],) + tuple(input.shape[2:])} for input "
                         f"of shape {tuple(input.shape)}, got {tuple(target.shape)}")
    return input.shape[1]


def _one_hot(target, c, class_axis, ndim, dtype):
    """(target == class) as `dtype`, with the class axis at `class_axis` of an ndim-D result."""
    classes = lucid.arange(c, device=target.device)
    shape = [1] * ndim
    shape[class_axis] = c
    return (lucid.unsqueeze(target, class_axis) == classes.reshape(shape)).to(dtype)


def _nll_parts(logp, target, weight, ignore_index, label_smoothing, fn):
    """Shared by nll_loss and cross_entropy with class-index targets: the checks, then
    (per-element loss before reduction, per-element weight of the target class,
    the one-hot of the target, the valid mask, weight shaped to broadcast or None)."""
    c = _class_layout(logp, target, fn)
    if target.dtype.is_floating_point:
        raise TypeError(f"{fn}(): class-index target must be an integer tensor, got {target.dtype}")
    class_axis = 0 if logp.ndim == 1 else 1
    shape = [1] * logp.ndim
    shape[class_axis] = c
    if weight is not None and tuple(weight.shape) != (c,):
        raise ValueError(f"{fn}(): expected weight of shape ({c},), got {tuple(weight.shape)}")
    valid_mask = target != ignore_index
    valid = valid_mask.to(logp.dtype)
    onehot = _one_hot(target, c, class_axis, logp.ndim, logp.dtype)
    # a target outside [0, C) must be the ignored one
    bad = lucid.logical_and(target != ignore_index, lucid.logical_or(target < 0, target >= c))
    if bool(lucid.any(bad)):
        raise IndexError(f"{fn}(): target values must lie in [0, {c}) or equal ignore_index={ignore_index}")
    w = None if weight is None else weight.reshape(shape)
    picked = onehot if w is None else onehot * w
    # Per-element weight of the target class (0 where ignored): the mean's denominator.
    elem_w = lucid.sum(picked, dim=class_axis) * valid
    # Select, never multiply by 0: a non-target class at log-probability -inf, or an
    # ignored row holding inf / NaN, must not turn the loss into NaN (0 * inf), as in PyTorch.
    target_logp = lucid.where(onehot != 0, logp, 0.0)
    target_logp = target_logp if w is None else target_logp * w
    loss = lucid.where(valid_mask, -lucid.sum(target_logp, dim=class_axis), 0.0)
    if label_smoothing > 0.0:
        smooth = lucid.where(valid_mask, -lucid.sum(logp if w is None else logp * w, dim=class_axis), 0.0)
        loss = loss * (1.0 - label_smoothing) + smooth * (label_smoothing / c)
    return loss, elem_w, onehot, valid, w


def _nll_from_log_probs(logp, target, weight, ignore_index, reduction, label_smoothing, fn):
    loss, elem_w = _nll_parts(logp, target, weight, ignore_index, label_smoothing, fn)[:2]
    if reduction == "mean":
        return lucid.sum(loss) / lucid.sum(elem_w)
    return _reduce(loss, reduction)


class _CrossEntropyTargets(Function):
    """cross_entropy's common case as one graph node (CrossEntropyIndexBackward): logits
    (N, C, *), every target a class (none ignored), no class weights, no smoothing, the
    mean. `_C.autograd_cross_entropy` (csrc/autograd/loss.cpp) runs log_softmax's ops,
    gathers the targets' log-probabilities and averages them, and records the node,
    whose first-order backward is there. This class is its formula under create_graph
    (the node is its ctx; saved: input, logp, target): with n targets,
    ``dlogp = -onehot * g / n`` and ``dinput = dlogp - softmax * sum_c dlogp``."""

    @staticmethod
    def backward(ctx, g):
        input, logp, target = ctx.saved_tensors
        if lucid.is_grad_enabled():  # a backward that is itself recorded: logp as a function of input
            logp = log_softmax(input, dim=1)
        dlogp = -(_one_hot(target, logp.shape[1], 1, logp.ndim, logp.dtype) * (g / target.numel()))
        return dlogp - lucid.exp(logp) * lucid.sum(dlogp, dim=1, keepdim=True), None


class _CrossEntropyIndex(Function):
    """cross_entropy with class-index targets in general (class weights, ignored targets,
    label smoothing, any reduction, a 1-D input) as one graph node
    (CrossEntropyIndexBackward): `_C.autograd_cross_entropy_general`
    (csrc/autograd/loss.cpp) runs log_softmax's ops and then what ``_nll_parts`` runs,
    op for op (the same bits), and records the node, whose first-order backward is
    there. This class is its formula under create_graph; the node is its ctx (saved:
    input, logp; ``ctx.buffers``: onehot, valid, the weight shaped to broadcast or None,
    the mean's denominator or None; ``ctx.params``: class axis, reduction (0 none,
    1 mean, 2 sum); ``ctx.scalars[0]``: label smoothing). The closed form, in lucid ops:
    with ``q`` the target distribution (one-hot, smoothed by e: ``(1-e) onehot + e/C``,
    times the class weights) and ``s`` the upstream gradient per element (divided by the
    summed target weights for the mean; 0 where ignored), ``dlogp = -s q`` and
    ``dinput = dlogp - softmax * sum_c dlogp``."""

    @staticmethod
    def backward(ctx, g):
        input, logp = ctx.saved_tensors
        onehot, valid, w, den = ctx.buffers
        class_axis, reduction = ctx.params
        e = ctx.scalars[0]
        if lucid.is_grad_enabled():  # a backward that is itself recorded: logp as a function of input
            logp = log_softmax(input, dim=class_axis)
        c = logp.shape[class_axis]
        q = onehot if e <= 0.0 else onehot * (1.0 - e) + e / c
        if w is not None:
            q = q * w
        # Select, not multiply: an all-ignored mean divides by 0, and its gradient is 0 as in the composed form.
        s = lucid.where(valid != 0, g / den if reduction == 1 else g, 0.0)
        dlogp = -(q * lucid.unsqueeze(s, class_axis))
        return dlogp - lucid.exp(logp) * lucid.sum(dlogp, dim=class_axis, keepdim=True)


_C._register_loss(_CrossEntropyTargets, _CrossEntropyIndex)


@autocast_op("float32")
def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood of class indices given log-probabilities.

    input (N, C, *) or (C,); target (N, *) or () of class indices. ``loss_i =
    -weight[t_i] * input[i, t_i]``, 0 where ``t_i == ignore_index``; the
    mean divides by the summed weights of the counted targets.

    >>> import lucid
    >>> logp = lucid.tensor([[-1.0, -2.0], [-3.0, -0.5]])
    >>> lucid.nn.functional.nll_loss(logp, lucid.tensor([0, 1])).item()
    0.75
    """
    fn = "nll_loss"
    _check_reduction(reduction, fn)
    return _nll_from_log_probs(input, target, weight, ignore_index, reduction, 0.0, fn)


@autocast_op("float32")
def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Cross-entropy between logits ``input`` and ``target``.

    Class-index target (integer, shape (N, *)): ``(1-e) * nll(log_softmax(x), t)
    + e/C * sum_c -weight[c] log_softmax(x)_c`` with ``e = label_smoothing``,
    ignore_index and the weighted mean as in nll_loss. Probability target
    (float, same shape as input): ``-sum_c weight[c] q_c log_softmax(x)_c`` with
    ``q = (1-e) p + e/C``; the mean is over the N (and spatial) elements.
    ValueError for bad shapes, a label_smoothing outside [0, 1] or an unknown reduction.

    >>> import lucid
    >>> logits = lucid.tensor([[0.0, 0.0]])
    >>> round(lucid.nn.functional.cross_entropy(logits, lucid.tensor([1])).item(), 4)
    0.6931
    """
    fn = "cross_entropy"
    _check_reduction(reduction, fn)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{fn}(): label_smoothing must be in [0, 1], got {label_smoothing}")
    if input.ndim == 0:
        raise ValueError(f"{fn}(): expected an input of shape (C,) or (N, C, *), got a 0-d tensor")
    class_axis = 0 if input.ndim == 1 else 1
    if type(ignore_index) is not int and (isinstance(ignore_index, bool)
                                         or not isinstance(ignore_index, (int, np.integer))):
        raise TypeError(f"{fn}(): argument 'ignore_index' must be an int, got {type(ignore_index).__name__}")
    if not target.dtype.is_floating_point:
        # One node, unless the class weights themselves want a gradient (the composed form gives one).
        if (input.dtype.is_floating_point and input.shape[class_axis] > 0
                and (weight is None or not weight.requires_grad)):
            if (weight is None and reduction == "mean" and label_smoothing == 0.0 and class_axis == 1
                    and ignore_index not in range(input.shape[1])):
                out = _C.autograd_cross_entropy(input, target)  # None unless every target is a class
                if out is not None:
                    return out
            # the general form, one node: the kernels and (when recording) the node in one C++ call
            return _C.autograd_cross_entropy_general(input, target, weight, int(ignore_index), reduction,
                                                     float(label_smoothing))
        logp = log_softmax(input, dim=class_axis)
        return _nll_from_log_probs(logp, target, weight, ignore_index, reduction, float(label_smoothing), fn)
    logp = log_softmax(input, dim=class_axis)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{fn}(): a probability target must have the input's shape {tuple(input.shape)}, "
                         f"got {tuple(target.shape)}")
    c = input.shape[class_axis]
    q = target * (1.0 - label_smoothing) + label_smoothing / c if label_smoothing > 0 else target
    if weight is not None:
        shape = [1] * input.ndim
        shape[class_axis] = c
        q = q * weight.reshape(shape)
    return _reduce(-lucid.sum(logp * q, dim=class_axis), reduction)


def _pointwise_loss(input, target, fn, reduction):
    _check_reduction(reduction, fn)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{fn}(): input and target must have one shape, got {tuple(input.shape)} and "
                         f"{tuple(target.shape)}")
    return input - target


@autocast_op("float32")
def mse_loss(input, target, reduction="mean"):
    """``(input - target)^2``, reduced.

    >>> import lucid
    >>> lucid.nn.functional.mse_loss(lucid.tensor([1.0, 3.0]), lucid.tensor([0.0, 0.0])).item()
    5.0
    """
    d = _pointwise_loss(input, target, "mse_loss", reduction)
    return _reduce(d * d, reduction)


def l1_loss(input, target, reduction="mean"):
    """``|input - target|``, reduced.

    >>> import lucid
    >>> lucid.nn.functional.l1_loss(lucid.tensor([1.0, -3.0]), lucid.tensor([0.0, 0.0])).item()
    2.0
    """
    d = _pointwise_loss(input, target, "l1_loss", reduction)
    return _reduce(lucid.abs(d), reduction)


def _same_shape(input, target, fn):
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{fn}(): input and target must have one shape, got {tuple(input.shape)} and "
                         f"{tuple(target.shape)}")


@autocast_op("float32")
def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """``-weight * (t log(p) + (1 - t) log(1 - p))`` with each log clamped at -100
    (as PyTorch, so p = 0 or 1 gives a finite loss).

    >>> import lucid
    >>> round(lucid.nn.functional.binary_cross_entropy(lucid.tensor([0.5]), lucid.tensor([1.0])).item(), 4)
    0.6931
    """
    fn = "binary_cross_entropy"
    _check_reduction(reduction, fn)
    _same_shape(input, target, fn)
    log_p = lucid.clamp(lucid.log(input), min=-100.0)
    log_q = lucid.clamp(lucid.log(1.0 - input), min=-100.0)
    loss = -(target * log_p + (1.0 - target) * log_q)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@autocast_op("float32")
def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):
    """``(1 - t) x + (1 + (pos_weight - 1) t) * softplus(-x)``, times ``weight``: BCE on
    ``sigmoid(x)`` without overflow. ``pos_weight`` broadcasts along the last axis.

    >>> import lucid
    >>> round(lucid.nn.functional.binary_cross_entropy_with_logits(lucid.tensor([0.0]), lucid.tensor([1.0])).item(), 4)
    0.6931
    """
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


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss: ``-log p(target | input)`` summed over
    every alignment. ``log_probs`` (T, N, C) (or (T, C)) log-softmax outputs; ``targets``
    (N, S) padded or 1-D concatenated; lengths per sample. ``reduction='mean'`` divides each
    loss by its target length, then averages, as PyTorch; ``zero_infinity`` zeroes
    impossible alignments' infinite losses (and their gradients)."""
    fn = "ctc_loss"
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if lp.ndim != 3:
        raise ValueError(f"{fn}(): expected log_probs (T, N, C) or (T, C), got shape {tuple(log_probs.shape)}")
    steps, n, c = lp.shape
    if not isinstance(blank, numbers.Integral) or not 0 <= blank < c:
        raise ValueError(f"{fn}(): argument 'blank' must be a class index in [0, {c}), got {blank!r}")

    def host(v, name):
        a = np.asarray(v.to("cpu").numpy() if isinstance(v, lucid.Tensor) else v, dtype=np.int64).reshape(-1)
        if a.size != n:
            raise ValueError(f"{fn}(): argument '{name}' must hold {n} lengths, got {a.size}")
        return a

    in_len, tg_len = host(input_lengths, "input_lengths"), host(target_lengths, "target_lengths")
    if (in_len < 0).any() or (in_len > steps).any() or (tg_len < 0).any():
        raise ValueError(f"{fn}(): lengths must be non-negative and input_lengths at most {steps}")
    tg = np.asarray(targets.to("cpu").numpy(), dtype=np.int64)
    if tg.ndim == 2:  # (N, S) padded
        rows = [tg[i, :tg_len[i]] for i in range(n)]
    else:  # concatenated targets, split by their lengths
        ends = np.cumsum(tg_len)
        rows = [tg.reshape(-1)[e - l:e] for e, l in zip(ends, tg_len)]
    smax = int(tg_len.max()) if n else 0
    width = 2 * smax + 1
    ext = np.full((n, width), blank, dtype=np.int64)  # blank, l1, blank, l2, ..., blank
    for i, row in enumerate(rows):
        if (row < 0).any() or (row >= c).any() or (row == blank).any():
            raise ValueError(f"{fn}(): targets must be class indices in [0, {c}) other than the blank")
        ext[i, 1:2 * len(row):2] = row
    # a skip from s-2 to s is allowed when s holds a label different from the one at s-2
    skip = np.zeros((n, width), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    valid = np.arange(width)[None, :] < (2 * tg_len[:, None] + 1)
    dev, dt = lp.device, lp.dtype
    # "Impossible" is a large finite negative, not -inf: logsumexp over all -inf rows
    # has a NaN gradient, which would reach every sample through the shared steps.
    big = 1e4 if dt == lucid.float16 else 1e30
    neg_inf = -big
    gather_idx = lucid.tensor(ext, device=dev)
    skip_t = lucid.tensor(skip, device=dev)
    valid_t = lucid.tensor(valid, device=dev)
    ninf_col = lucid.full((n, 1), neg_inf, dtype=dt, device=dev)
    ninf_two = lucid.full((n, 2), neg_inf, dtype=dt, device=dev)

    emit = [lucid.gather(lp[t], 1, gather_idx) for t in range(steps)]  # (N, width) each
    start = np.full((n, width), neg_inf)
    start[:, 0] = 0.0
    start[:, 1] = np.where(tg_len > 0, 0.0, neg_inf)
    alpha = lucid.tensor(start.astype(np.float32), device=dev).to(dt) + emit[0] if steps else None
    snapshots = {1: alpha} if steps else {}  # alpha after t steps, for each input length
    for t in range(1, steps):
        stay = alpha
        step1 = lucid.cat([ninf_col, alpha[:, :-1]], dim=1)
        step2 = lucid.where(skip_t, lucid.cat([ninf_two, alpha[:, :-2]], dim=1), neg_inf)
        alpha = lucid.logsumexp(lucid.stack([stay, step1, step2], dim=0), dim=0) + emit[t]
        alpha = lucid.where(valid_t, alpha, neg_inf)
        snapshots[t + 1] = alpha
    losses = []
    for i in range(n):
        t_i = int(in_len[i])
        if t_i == 0:
            losses.append(lucid.full((), 0.0 if tg_len[i] == 0 else float("inf"), dtype=dt, device=dev))
            continue
        a = snapshots[t_i][i]
        last = 2 * int(tg_len[i])
        ends = a[last:last + 1] if last == 0 else lucid.stack([a[last], a[last - 1]])
        losses.append(-lucid.logsumexp(ends, dim=0))
    loss = lucid.stack(losses) if losses else lucid.zeros(0, dtype=dt, device=dev)
    loss = lucid.where(loss >= big / 2, float("inf"), loss)  # no alignment: an infinite loss, as PyTorch
    if zero_infinity:
        loss = lucid.where(lucid.isinf(loss), 0.0, loss)
    if reduction == "mean":
        return lucid.mean(loss / lucid.tensor(np.maximum(tg_len, 1).astype(np.float32), device=dev).to(dt))
    out = _reduce_checked(loss, reduction, fn)
    return out if batched or reduction != "none" else out.reshape(())


__all__ = ["cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss",
           "gaussian_nll_loss", "ctc_loss"]
