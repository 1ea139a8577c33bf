"""BatchNorm folded into the conv / linear before it, with PyTorch's exact float op
order (``torch.nn.utils.fusion``), so the folded weights carry PyTorch's bits:

* conv:   ``w' = w * (gamma * r)`` (``r`` reshaped per output channel),
          ``b' = ((b - mean) * r) * gamma + beta``
* linear: ``k = gamma * r``, ``w' = w * k[:, None]``, ``b' = (b - mean) * k + beta``

with ``r = 1 / sqrt(var + eps)`` and ``b = 0`` when the layer has no bias. Shared by
``lucid.quantization.fuse_modules`` (eval-mode fusion) and the QAT conv-bn layers
(``lucid.nn.intrinsic.qat``), whose folded forward is the fused layer's.
"""
from __future__ import annotations

import lucid._namespace as lucid

from ...autograd import no_grad
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_weights", "fuse_linear_bn_weights", "rsqrt_var"]


def rsqrt_var(var, eps):
    """``1 / sqrt(var + eps)``: the BatchNorm scale factor, in PyTorch's op order."""
    return 1.0 / (var + eps).sqrt()


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """Folded ``(weight, bias)`` Parameters of a conv followed by an eval-mode BatchNorm
    (PyTorch's ``fuse_conv_bn_weights`` op order; ``conv_b`` / ``bn_w`` / ``bn_b`` may be None)."""
    with no_grad():
        b = conv_b if conv_b is not None else lucid.zeros_like(bn_rm)
        g = bn_w if bn_w is not None else lucid.ones_like(bn_rm)
        beta = bn_b if bn_b is not None else lucid.zeros_like(bn_rm)
        r = rsqrt_var(bn_rv, bn_eps)
        shape = (-1,) + (1,) * (conv_w.ndim - 1)
        w = conv_w * (g * r).reshape(shape)
        bias = (b - bn_rm) * r * g + beta
    return (Parameter(w.detach(), conv_w.requires_grad),
            Parameter(bias.detach(), conv_b.requires_grad if conv_b is not None else False))


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """Folded ``(weight, bias)`` Parameters of a linear followed by an eval-mode BatchNorm1d
    (PyTorch's ``fuse_linear_bn_weights`` op order)."""
    with no_grad():
        b = linear_b if linear_b is not None else lucid.zeros_like(bn_rm)
        k = bn_w * rsqrt_var(bn_rv, bn_eps)
        w = linear_w * k.reshape(-1, 1)
        bias = (b - bn_rm) * k + bn_b
    return (Parameter(w.detach(), linear_w.requires_grad),
            Parameter(bias.detach(), linear_b.requires_grad if linear_b is not None else False))
