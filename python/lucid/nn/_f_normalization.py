"""Normalisation and similarity in ``lucid.nn.functional``: layer_norm,
group_norm, rms_norm, instance_norm, normalize, cosine_similarity,
pairwise_distance. All are compositions of lucid ops (biased variance, as
PyTorch normalises with); a recorded layer_norm is one graph node
(``_LayerNorm``) running the same ops."""
from __future__ import annotations

import numbers

import numpy as np

import lucid

from .. import _C
from ..amp.autocast_mode import _state as _amp, upper as _amp_upper
from ..autograd import is_grad_enabled
from ..autograd.function import Function


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


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the trailing
    ``normalized_shape`` axes (biased variance).

    >>> import lucid
    >>> y = lucid.nn.functional.layer_norm(lucid.tensor([[1.0, 3.0]]), (2,))
    >>> [round(v, 3) for v in y[0].tolist()]
    [-1.0, 1.0]
    """
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py): float32 list
        input, weight, bias = _amp_upper(input, weight, bias)
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


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalises each of ``num_groups`` channel groups of an (N, C, *) input over
    its channels and spatial axes, then applies per-channel ``weight``/``bias``.

    >>> import lucid
    >>> lucid.nn.functional.group_norm(lucid.randn(2, 4, 3), 2).shape
    (2, 4, 3)
    """
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py): float32 list
        input, weight, bias = _amp_upper(input, weight, bias)
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


def _norm(x, p, dim):
    if p == 2:
        return lucid.sqrt(lucid.sum(x * x, dim=dim, keepdim=True))
    if p == 1:
        return lucid.sum(lucid.abs(x), dim=dim, keepdim=True)
    if p == float("inf"):
        return lucid.amax(lucid.abs(x), dim=dim, keepdim=True)
    return lucid.sum(lucid.abs(x) ** p, dim=dim, keepdim=True) ** (1.0 / p)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """``x / max(||x||_p, eps)`` along ``dim``.

    >>> import lucid
    >>> lucid.nn.functional.normalize(lucid.tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    if not isinstance(p, numbers.Real) or isinstance(p, bool) or p <= 0:
        raise ValueError(f"normalize(): argument 'p' must be a positive number, got {p!r}")
    return input / lucid.clamp(_norm(input, p, dim), min=eps)


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


__all__ = ["layer_norm", "rms_norm", "group_norm", "instance_norm", "normalize", "cosine_similarity",
           "pairwise_distance"]
