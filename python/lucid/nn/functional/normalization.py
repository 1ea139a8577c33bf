"""Normalisation in ``lucid.nn.functional``: batch_norm, layer_norm, rms_norm,
group_norm, instance_norm, local_response_norm and normalize. All are
compositions of lucid ops (biased variance, as PyTorch normalises with); a
recorded train-mode batch_norm and a recorded layer_norm are one graph node each
(``_BatchNormTrain``, ``_LayerNorm``), run in C++ over the same ops."""
from __future__ import annotations

import numbers

import numpy as np

import lucid._namespace as lucid

from ... import _C
from ..._ops.autocast import autocast_op
from ..._ops.nn import avg_pool2d
from ...autograd import is_grad_enabled
from ...autograd.function import Function
from .distance import _norm


def channel_affine(y, weight, bias, shape):
    """``y * weight + bias`` with the per-channel parameters reshaped to broadcast as
    ``shape``; either may be None (batch_norm, group_norm, instance_norm share it)."""
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def _shape_arg(normalized_shape, fn):
    if isinstance(normalized_shape, numbers.Integral) and not isinstance(normalized_shape, bool):
        return (int(normalized_shape),)
    try:
        shape = tuple(int(s) for s in normalized_shape)
    except TypeError:
        raise TypeError(f"{fn}(): argument 'normalized_shape' must be an int or a sequence of ints, "
                        f"got {normalized_shape!r}") from None
    return shape


def _check_trailing(input, shape, fn):
    if input.ndim < len(shape) or tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise ValueError(f"{fn}(): expected an input whose last dimensions are {shape}, got shape "
                         f"{tuple(input.shape)}")


def _check_param(t, shape, name, fn):
    if t is not None and tuple(t.shape) != tuple(shape):
        raise ValueError(f"{fn}(): expected {name} of shape {tuple(shape)}, got {tuple(t.shape)}")


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


@autocast_op("float32")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the trailing
    ``normalized_shape`` axes (biased variance).

    >>> import lucid
    >>> y = lucid.nn.functional.layer_norm(lucid.tensor([[1.0, 3.0]]), (2,))
    >>> [round(v, 3) for v in y[0].tolist()]
    [-1.0, 1.0]
    """
    fn = "layer_norm"
    shape = _shape_arg(normalized_shape, fn)
    _check_trailing(input, shape, fn)
    _check_param(weight, shape, "weight", fn)
    _check_param(bias, shape, "bias", fn)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    if not _LayerNorm.composed(input, weight, bias):
        return _C.autograd_layer_norm(input, weight, bias, dims, eps)  # the ops and (when recording) the node
    mean = lucid.mean(input, dim=dims, keepdim=True)
    centered = input - mean
    var = lucid.mean(centered * centered, dim=dims, keepdim=True)
    y = centered * lucid.rsqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


class _LayerNorm(Function):
    """layer_norm as one graph node (LayerNormBackward): `_C.autograd_layer_norm`
    (csrc/autograd/normalization.cpp) runs the composed form's ops in the same order
    (the same bits) without recording each, and records the node, whose first-order
    backward is there. This class is its formula under create_graph (the node is its
    ctx: saved (input, xhat, rstd, weight), ``ctx.dims``, ``ctx.eps``). The closed
    form, in lucid ops (so it runs on either stream), with ``gy = g * weight`` and
    means over the normalized axes:
    ``gx = (gy - mean(gy) - xhat * mean(gy * xhat)) * rstd``, ``gweight = sum(g * xhat)``,
    ``gbias = sum(g)`` over the leading axes. With grad mode on in backward
    (create_graph) it recomputes xhat and rstd from the input with recorded ops, so
    the gradient can itself be differentiated."""

    @staticmethod
    def composed(input, weight, bias):
        """Whether a call records op by op: something needs a gradient but the input is
        not float32 / float64 or a parameter has another dtype (the node's formula
        assumes one dtype). Everything else runs in one C++ call."""
        if not is_grad_enabled():
            return False
        wanted = input.requires_grad
        for p in (weight, bias):
            if p is not None:
                wanted = wanted or p.requires_grad
        if not wanted:
            return False
        if input.dtype.name not in ("float32", "float64"):
            return True
        return any(p is not None and p.dtype != input.dtype for p in (weight, bias))

    @staticmethod
    def backward(ctx, g):
        input, xhat, rstd, weight = ctx.saved_tensors
        dims, needs = tuple(ctx.dims), ctx.needs_input_grad
        lead = tuple(range(input.ndim - len(dims)))
        if is_grad_enabled():  # create_graph: xhat and rstd as recorded functions of the input
            centered = input - lucid.mean(input, dim=dims, keepdim=True)
            rstd = lucid.rsqrt(lucid.mean(centered * centered, dim=dims, keepdim=True) + ctx.eps)
            xhat = centered * rstd

        def over_lead(t):
            return lucid.sum(t, dim=lead) if lead else t

        gw = over_lead(g * xhat) if needs[1] else None
        gb = over_lead(g) if needs[2] else None
        gx = None
        if needs[0]:
            gy = g if weight is None else g * weight
            a = lucid.mean(gy, dim=dims, keepdim=True)
            b = lucid.mean(gy * xhat, dim=dims, keepdim=True)
            gx = ((gy - a) - xhat * b) * rstd
        return gx, gw, gb


_C._register_layer_norm(_LayerNorm)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the trailing axes; ``eps``
    defaults to the dtype's machine epsilon (as PyTorch).

    >>> import lucid
    >>> [round(v, 4) for v in lucid.nn.functional.rms_norm(lucid.tensor([[3.0, 4.0]]), (2,), eps=0.0)[0].tolist()]
    [0.8485, 1.1314]
    """
    fn = "rms_norm"
    shape = _shape_arg(normalized_shape, fn)
    _check_trailing(input, shape, fn)
    _check_param(weight, shape, "weight", fn)
    if eps is None:
        # the input dtype's own epsilon, as PyTorch (float64 took float32's before: 1.2e-7, not 2.2e-16)
        eps = float(np.finfo({"float16": np.float16, "float64": np.float64}.get(input.dtype.name, np.float32)).eps)
        if input.dtype.name == "bfloat16":
            eps = 0.0078125
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    y = input * lucid.rsqrt(lucid.mean(input * input, dim=dims, keepdim=True) + eps)
    return y if weight is None else y * weight


@autocast_op("float32")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalises each of ``num_groups`` channel groups of an (N, C, *) input over
    its channels and spatial axes, then applies per-channel ``weight``/``bias``.

    >>> import lucid
    >>> lucid.nn.functional.group_norm(lucid.randn(2, 4, 3), 2).shape
    (2, 4, 3)
    """
    fn = "group_norm"
    if input.ndim < 2:
        raise ValueError(f"{fn}(): expected an input of at least 2 dimensions (N, C, *), got shape "
                         f"{tuple(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    if not isinstance(num_groups, numbers.Integral) or num_groups <= 0 or c % num_groups:
        raise ValueError(f"{fn}(): num_groups must be a positive int dividing the {c} channels, got {num_groups!r}")
    _check_param(weight, (c,), "weight", fn)
    _check_param(bias, (c,), "bias", fn)
    grouped = input.reshape(n, int(num_groups), -1)
    mean = lucid.mean(grouped, dim=2, keepdim=True)
    centered = grouped - mean
    var = lucid.mean(centered * centered, dim=2, keepdim=True)
    y = (centered * lucid.rsqrt(var + eps)).reshape(tuple(input.shape))
    shape = (1, c) + (1,) * (input.ndim - 2)
    return channel_affine(y, weight, bias, shape)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalises each (sample, channel) of an (N, C, *) input over its spatial axes.

    With ``use_input_stats`` the instance statistics are used and the running
    buffers (if given) move by ``momentum`` towards their batch average
    (unbiased variance); otherwise the running statistics normalise.
    """
    fn = "instance_norm"
    if input.ndim < 3:
        raise ValueError(f"{fn}(): expected an input of at least 3 dimensions (N, C, *), got shape "
                         f"{tuple(input.shape)}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_param(t, (c,), name, fn)
    shape = (1, c) + (1,) * (input.ndim - 2)
    dims = tuple(range(2, input.ndim))
    if use_input_stats:
        mean = lucid.mean(input, dim=dims, keepdim=True)
        centered = input - mean
        var = lucid.mean(centered * centered, dim=dims, keepdim=True)
        count = input.numel() // max(input.shape[0] * c, 1)
        if running_mean is not None or running_var is not None:
            with lucid.no_grad():
                if running_mean is not None:
                    batch_mean = lucid.mean(mean.detach().reshape(input.shape[0], c), dim=0)
                    running_mean.copy_(running_mean * (1.0 - momentum) + batch_mean * momentum)
                if running_var is not None:
                    unbiased = lucid.mean(var.detach().reshape(input.shape[0], c), dim=0) * (count / max(count - 1, 1))
                    running_var.copy_(running_var * (1.0 - momentum) + unbiased * momentum)
        y = centered * lucid.rsqrt(var + eps)
    else:
        if running_mean is None or running_var is None:
            raise ValueError(f"{fn}(): running_mean and running_var are required when use_input_stats=False")
        y = (input - running_mean.reshape(shape)) * lucid.rsqrt(running_var.reshape(shape) + eps)
    return channel_affine(y, weight, bias, shape)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta`` over (N, C, *):
    the channel window is centred (``size // 2`` before, ``(size - 1) // 2`` after) with
    zeros past the ends, and the mean always divides by ``size``, as PyTorch."""
    fn = "local_response_norm"
    if input.ndim < 3:
        raise ValueError(f"{fn}(): expected an input of at least 3 dimensions (N, C, *), got shape "
                         f"{tuple(input.shape)}")
    if not isinstance(size, numbers.Integral) or isinstance(size, bool) or size < 1:
        raise ValueError(f"{fn}(): argument 'size' must be a positive int, got {size!r}")
    if input.numel() == 0:
        return input
    shape = tuple(input.shape)
    sq = (input * input).reshape(shape[0], 1, shape[1], -1)  # (N, 1, C, rest)
    sq = lucid.pad(sq, (0, 0, size // 2, (size - 1) // 2))
    mean = avg_pool2d(sq, (size, 1), 1).reshape(shape)
    return input / (mean * alpha + k) ** beta


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """``x / max(||x||_p, eps)`` along ``dim``.

    >>> import lucid
    >>> lucid.nn.functional.normalize(lucid.tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    if not isinstance(p, numbers.Real) or isinstance(p, bool) or p <= 0:
        raise ValueError(f"normalize(): argument 'p' must be a positive number, got {p!r}")
    return input / lucid.clamp(_norm(input, p, dim), min=eps)


__all__ = ["batch_norm", "layer_norm", "rms_norm", "group_norm", "instance_norm", "local_response_norm", "normalize"]
