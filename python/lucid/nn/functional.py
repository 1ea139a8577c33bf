"""``lucid.nn.functional``: the stateless forms of the layers and the losses,
with PyTorch's names, arguments and defaults.

Convolution, pooling, linear and embedding run on dedicated kernels
(``lucid._ops.nn``); activations, normalisation and losses are compositions
of lucid ops, so autograd differentiates them on whichever stream holds the
data.

>>> import lucid
>>> import lucid.nn.functional as F
>>> F.softmax(lucid.tensor([0.0, 0.0]), dim=0).tolist()
[0.5, 0.5]
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid

from ..amp.autocast_mode import _state as _amp, upper as _amp_upper
from .. import _C
from ..autograd.function import Function
from .._ops.nn import adaptive_avg_pool2d, avg_pool2d, conv1d, conv2d, embedding, linear, max_pool2d  # noqa: F401
from ._f_normalization import channel_affine

__all__ = [
    "conv1d", "conv2d", "linear", "embedding", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
    "relu", "relu6", "leaky_relu", "gelu", "sigmoid", "tanh", "hardswish", "hardsigmoid",
    "softmax", "log_softmax", "dropout", "flatten", "batch_norm",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
]


# ----- activations -------------------------------------------------------------------
# ``inplace=True`` writes the result into ``input`` and returns it (lucid's
# in-place semantics, docs/guide.md): the input's memory on the CPU stream,
# its array on the GPU stream; a leaf that requires grad raises, as in PyTorch.


def _maybe_inplace(input, fn, inplace):
    if not inplace:
        return fn(input)
    from .._ops.inplace import apply_

    return apply_(input, fn)

def relu(input, inplace=False):
    """``max(x, 0)``.

    >>> import lucid
    >>> lucid.nn.functional.relu(lucid.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    if type(input).__name__ == "QTensor":  # a quantized activation: max(code, zero_point)
        from .quantized import ReLU

        return ReLU()(input)
    return input.relu_() if inplace else lucid.relu(input)


def relu6(input, inplace=False):
    """``min(max(x, 0), 6)``."""
    return input.clamp_(0.0, 6.0) if inplace else lucid.clamp(input, 0.0, 6.0)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` for ``x > 0``, else ``negative_slope * x``."""
    return _maybe_inplace(input, lambda x: lucid.where(x > 0, x, x * negative_slope), inplace)


def gelu(input, approximate="none"):
    """``x * Phi(x)`` (``approximate='tanh'`` for the tanh form); ValueError for other modes."""
    return lucid.gelu(input, approximate=approximate)


def sigmoid(input):
    """``1 / (1 + exp(-x))``."""
    return lucid.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent."""
    return lucid.tanh(input)


def hardsigmoid(input, inplace=False):
    """``clamp(x / 6 + 1/2, 0, 1)``."""
    return _maybe_inplace(input, lambda x: lucid.clamp(x / 6.0 + 0.5, 0.0, 1.0), inplace)


def hardswish(input, inplace=False):
    """``x * clamp(x + 3, 0, 6) / 6``.

    >>> import lucid
    >>> lucid.nn.functional.hardswish(lucid.tensor([-4.0, 0.0, 4.0])).tolist()
    [-0.0, 0.0, 4.0]
    """
    return _maybe_inplace(input, lambda x: x * lucid.clamp(x + 3.0, 0.0, 6.0) / 6.0, inplace)


def softmax(input, dim=None, dtype=None):
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (the max shift keeps it finite).

    >>> import lucid
    >>> [round(v, 4) for v in lucid.nn.functional.softmax(lucid.tensor([1000.0, 1000.0, 0.0]), dim=0).tolist()]
    [0.5, 0.5, 0.0]
    """
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py): float32 list
        (input,) = _amp_upper(input)
    if dtype is not None:
        input = input.to(dtype)
    return _C.autograd_softmax(input, dim, False)  # the ops and (when recording) SoftmaxBackward: one C++ call


def log_softmax(input, dim=None, dtype=None):
    """``x - max - log(sum(exp(x - max)))`` along ``dim``.

    >>> import lucid
    >>> round(lucid.nn.functional.log_softmax(lucid.tensor([0.0, 0.0]), dim=0).tolist()[0], 4)
    -0.6931
    """
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py): float32 list
        (input,) = _amp_upper(input)
    if dtype is not None:
        input = input.to(dtype)
    return _C.autograd_softmax(input, dim, True)  # the ops and (when recording) LogSoftmaxBackward: one C++ call


class _Softmax(Function):
    """softmax / log_softmax as one graph node (SoftmaxBackward / LogSoftmaxBackward):
    `_C.autograd_softmax` (csrc/autograd/normalization.cpp) runs ``exp(x - max) /
    sum(exp(x - max))`` (log_softmax: ``x - max - log(sum(exp(x - max)))``) and records
    the node, whose first-order backward is there. This class is its formula under
    create_graph; the node is its ctx (saved: the output y; ``ctx.dim``, ``ctx.op``):
    ``y * (g - sum(g * y))`` and ``g - exp(y) * sum(g)`` over the axis."""

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        dim = ctx.dim
        if ctx.op == "softmax":
            return y * (g - lucid.sum(g * y, dim=dim, keepdim=True))
        return g - lucid.exp(y) * lucid.sum(g, dim=dim, keepdim=True)


_C._register_softmax(_Softmax)


# ----- regularisation and reshaping ----------------------------------------------------

def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability ``p`` and scales the rest by ``1/(1-p)``
    when ``training``; identity otherwise. ValueError unless ``0 <= p <= 1``.
    Draws from lucid's generator (``lucid.manual_seed``)."""
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout(): probability 'p' must be between 0 and 1, got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _maybe_inplace(input, lambda x: x * 0.0, inplace)
    keep = (lucid.rand_like(input) >= p).to(input.dtype)
    return _maybe_inplace(input, lambda x: x * keep * (1.0 / (1.0 - p)), inplace)


def flatten(input, start_dim=1, end_dim=-1):
    """Merges axes ``start_dim..end_dim`` into one (the layer's default keeps the batch axis)."""
    return lucid.flatten(input, start_dim, end_dim)


# ----- normalisation ------------------------------------------------------------------

def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    """Normalises each channel (axis 1) of an (N, C, *) input.

    ``y = (x - mean) / sqrt(var + eps) * weight + bias`` with the batch's
    mean and biased variance when ``training`` (then the running buffers,
    if given, move by ``momentum`` towards the batch mean and *unbiased*
    variance, in place), else the running statistics. ValueError when
    training with a single value per channel.
    """
    fn = "batch_norm"
    if input.ndim < 2:
        raise ValueError(f"{fn}(): expected an input of at least 2 dimensions (N, C, *), got shape "
                         f"{tuple(input.shape)}")
    c = input.shape[1]
    shape = (1, c) + (1,) * (input.ndim - 2)
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise ValueError(f"{fn}(): expected {name} of shape ({c},), got {tuple(t.shape)}")
    if training:
        dims = (0,) + tuple(range(2, input.ndim))
        count = input.numel() // max(c, 1)
        if count <= 1:
            raise ValueError(f"{fn}(): expected more than 1 value per channel when training, got input of shape "
                             f"{tuple(input.shape)}")
        # the ops, the running buffers' update and (when recording) the node: one C++ call
        return _C.autograd_batch_norm(input, weight, bias, running_mean, running_var, dims, count, momentum, eps)
    if running_mean is None or running_var is None:
        raise ValueError(f"{fn}(): running_mean and running_var are required when not training")
    y = (input - running_mean.reshape(shape)) * lucid.rsqrt(running_var.reshape(shape) + eps)
    return channel_affine(y, weight, bias, shape)


class _BatchNormTrain(Function):
    """Train-mode batch_norm as one graph node (BatchNormTrainBackward):
    `_C.autograd_batch_norm` (csrc/autograd/normalization.cpp) runs the composed
    form's ops in the same order (the same bits) without recording each, moves the
    running buffers in place (after every value is computed: a failing call changes
    nothing) and records the node, whose first-order backward (this class's grad-mode-
    off branch, op for op) is there. This class is its formula under create_graph (the
    node is its ctx: saved (input, xhat, rstd, weight), ``ctx.dims``, ``ctx.eps``). The
    closed form, written with lucid ops so it runs on either stream and can itself be
    differentiated (with grad mode on it recomputes xhat and rstd from the input,
    recorded): ``gx = rstd * weight * (g - mean(g) - xhat * mean(g * xhat))`` with
    means over every axis but the channel's, ``gweight = sum(g * xhat)``,
    ``gbias = sum(g)`` (the means are those sums over the count)."""

    @staticmethod
    def backward(ctx, g):
        input, xhat, rstd, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        dims, shape = tuple(ctx.dims), (1, input.shape[1]) + (1,) * (input.ndim - 2)
        # Per channel: sum(g) and sum(g * xhat) are the bias and weight gradients, and
        # (over the count, times weight) the two means of the input gradient: two
        # full-size reductions in all, where the textbook form takes four.
        inv = 1.0 / (input.numel() // shape[1])
        if not lucid.is_grad_enabled():  # the usual backward: full-size ops straight to _C
            C = _C
            G, XH = g._impl, xhat._impl
            gb = C.sum(G, dims, False, None)
            gw = C.sum(C.mul(G, XH), dims, False, None)
            gx = None
            if needs[0]:
                scale = rstd if weight is None else rstd * weight.reshape(shape)
                a = (gw.reshape(shape) * inv)._impl
                b = (gb.reshape(shape) * inv)._impl
                gx = C.mul(C.sub(C.sub(G, C.mul(XH, a)), b), scale._impl)
            return gx, gw if needs[1] else None, gb if needs[2] else None
        # A backward that is itself recorded (create_graph): xhat and rstd as functions of input.
        centered = input - lucid.mean(input, dim=dims, keepdim=True)
        rstd = lucid.rsqrt(lucid.mean(centered * centered, dim=dims, keepdim=True) + ctx.eps)
        xhat = centered * rstd
        gb = lucid.sum(g, dim=dims)
        gw = lucid.sum(g * xhat, dim=dims)
        gx = None
        if needs[0]:
            scale = rstd if weight is None else rstd * weight.reshape(shape)
            gx = ((g - xhat * (gw.reshape(shape) * inv)) - gb.reshape(shape) * inv) * scale
        return gx, gw if needs[1] else None, gb if needs[2] else None


_C._register_batch_norm(_BatchNormTrain)


# ----- losses ---------------------------------------------------------------------------

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
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py): float32 list
        input, weight = _amp_upper(input, weight)
    fn = "nll_loss"
    _check_reduction(reduction, fn)
    return _nll_from_log_probs(input, target, weight, ignore_index, reduction, 0.0, fn)


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
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py): float32 list
        input, weight = _amp_upper(input, weight)
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


def mse_loss(input, target, reduction="mean"):
    """``(input - target)^2``, reduced.

    >>> import lucid
    >>> lucid.nn.functional.mse_loss(lucid.tensor([1.0, 3.0]), lucid.tensor([0.0, 0.0])).item()
    5.0
    """
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py): float32 list
        input, target = _amp_upper(input, target)
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


# ----- the rest of PyTorch's functional surface, one module per family ------------------
from ._f_activation import *  # noqa: E402,F401,F403
from ._f_normalization import *  # noqa: E402,F401,F403
from ._f_attention import *  # noqa: E402,F401,F403
from ._f_loss import *  # noqa: E402,F401,F403
from ._f_resample import *  # noqa: E402,F401,F403
from ._f_shape_pool import *  # noqa: E402,F401,F403
from . import _f_activation, _f_attention, _f_loss, _f_normalization, _f_resample, _f_shape_pool  # noqa: E402
from .._ops.nn import conv_transpose1d, conv_transpose2d  # noqa: E402,F401
from .._ops.conv3d_compose import conv3d, conv_transpose3d  # noqa: E402,F401

__all__ += ["conv_transpose1d", "conv_transpose2d", "conv3d", "conv_transpose3d"]
__all__ += [n for m in (_f_activation, _f_normalization, _f_attention, _f_loss, _f_resample, _f_shape_pool)
            for n in m.__all__]
from ._f_loss_extra import *  # noqa: E402,F401,F403
from ._f_bilinear import bilinear  # noqa: E402,F401
from . import _f_loss_extra  # noqa: E402
__all__ += _f_loss_extra.__all__ + ["bilinear"]
from ._f_pool3d_more import *  # noqa: E402,F401,F403
from . import _f_pool3d_more  # noqa: E402
__all__ += _f_pool3d_more.__all__
from ._f_sampling import *  # noqa: E402,F401,F403
from . import _f_sampling  # noqa: E402
__all__ += _f_sampling.__all__
from ._f_unpool_ctc import *  # noqa: E402,F401,F403
from . import _f_unpool_ctc  # noqa: E402
__all__ += _f_unpool_ctc.__all__
from ._f_distance import *  # noqa: E402,F401,F403
from . import _f_distance  # noqa: E402
__all__ += _f_distance.__all__
