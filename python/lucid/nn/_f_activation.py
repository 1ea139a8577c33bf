"""Activations of ``lucid.nn.functional`` composed from lucid ops:
silu, elu, selu, celu, softplus, mish, prelu, logsigmoid, hardtanh, softsign, glu.

Branches that would overflow on the side ``where`` discards (``exp`` of a
large positive input in elu) are computed on a clamped input, so the
discarded branch never produces ``inf * 0 = nan`` in the gradient.
"""
from __future__ import annotations

import numbers

import lucid

from ..autograd import Function
from .. import _C


def _check(input, fn):
    if not isinstance(input, lucid.Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, got {type(input).__name__}")


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (swish).

    >>> import lucid
    >>> round(lucid.nn.functional.silu(lucid.tensor([1.0])).item(), 4)
    0.7311
    """
    _check(input, "silu")
    return input * lucid.sigmoid(input)


def elu(input, alpha=1.0, inplace=False):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    >>> import lucid
    >>> round(lucid.nn.functional.elu(lucid.tensor([-1.0])).item(), 4)
    -0.6321
    """
    _check(input, "elu")
    return lucid.where(input > 0, input, lucid.expm1(lucid.clamp(input, max=0.0)) * alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    """``scale * elu(x, alpha)`` with SELU's fixed constants (Klambauer et al., 2017)."""
    return elu(input, _SELU_ALPHA) * _SELU_SCALE


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    _check(input, "celu")
    return lucid.where(input > 0, input, lucid.expm1(lucid.clamp(input, max=0.0) / alpha) * alpha)


class _Softplus(Function):
    """``log(1 + exp(beta x)) / beta``, computed as ``relu(z) + log1p(exp(-|z|))`` (never
    overflows); the gradient is ``sigmoid(beta x)`` (exactly 1/2 at 0).

    softplus runs and records in C++ (``_C.autograd_softplus``,
    csrc/autograd/elementwise.h); this formula serves create_graph, reading what the
    C++ node has as ctx: ``saved_tensors`` (x, beta x) and ``scalars`` (beta, threshold)."""

    @staticmethod
    def forward(ctx, x, beta, threshold):
        ctx.save_for_backward(x, x * beta)
        ctx.scalars = (beta, threshold)
        return _softplus_value(x, beta, threshold)

    @staticmethod
    def backward(ctx, g):
        x, z = ctx.saved_tensors
        beta, threshold = ctx.scalars
        if lucid.is_grad_enabled():  # create_graph: z's dependence on x is recorded too
            z = x * beta
        return lucid.where(z > threshold, g, g * lucid.sigmoid(z)), None, None


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``; ``x`` itself where ``beta * x > threshold``.

    >>> import lucid
    >>> round(lucid.nn.functional.softplus(lucid.tensor([0.0])).item(), 4)
    0.6931
    """
    _check(input, "softplus")
    for name, v in (("beta", beta), ("threshold", threshold)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"softplus(): argument '{name}' must be a number, got {type(v).__name__}")
    if beta == 0:
        raise ValueError("softplus(): argument 'beta' must be nonzero")
    if not input.dtype.is_floating_point:
        input = input.to(lucid.float32)
    return _autograd_softplus(input, float(beta), float(threshold))  # _softplus_value's ops and the node


_C._register_elementwise("softplus", _Softplus)
_autograd_softplus = _C.autograd_softplus


def _softplus_value(x, beta, threshold):  # the ops autograd_softplus runs (for a direct _Softplus.apply)
    z = x * beta
    soft = (lucid.relu(z) + lucid.log1p(lucid.exp(-lucid.abs(z)))) / beta
    return lucid.where(z > threshold, x, soft)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))`` (Misra, 2019).

    >>> import lucid
    >>> round(lucid.nn.functional.mish(lucid.tensor([1.0])).item(), 4)
    0.8651
    """
    _check(input, "mish")
    return input * lucid.tanh(softplus(input))


def logsigmoid(input):
    """``log(sigmoid(x)) = -softplus(-x)`` (finite for large ``|x|``)."""
    _check(input, "logsigmoid")
    return -softplus(-input)


def softsign(input):
    """``x / (1 + |x|)``."""
    _check(input, "softsign")
    return input / (lucid.abs(input) + 1.0)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``clamp(x, min_val, max_val)``."""
    _check(input, "hardtanh")
    if min_val > max_val:
        raise ValueError(f"hardtanh(): min_val ({min_val}) must not exceed max_val ({max_val})")
    return lucid.clamp(input, min_val, max_val)


def prelu(input, weight):
    """``x`` for ``x > 0``, else ``weight * x``; ``weight`` has 1 element or one per
    channel (axis 1 of the input, axis 0 of a 1-D input).

    >>> import lucid
    >>> lucid.nn.functional.prelu(lucid.tensor([-2.0, 3.0]), lucid.tensor([0.25])).tolist()
    [-0.5, 3.0]
    """
    _check(input, "prelu")
    if weight.ndim != 1:
        raise ValueError(f"prelu(): expected a 1-D weight, got shape {tuple(weight.shape)}")
    n = weight.shape[0]
    if n != 1:
        c = input.shape[1] if input.ndim >= 2 else input.shape[0] if input.ndim == 1 else 1
        if n != c:
            raise ValueError(f"prelu(): weight has {n} elements, expected 1 or the number of channels {c} "
                             f"(input shape {tuple(input.shape)})")
        if input.ndim >= 2:
            weight = weight.reshape((1, n) + (1,) * (input.ndim - 2))
    return lucid.where(input > 0, input, input * weight)


def glu(input, dim=-1):
    """Gated linear unit: halves ``a, b`` of ``dim``, ``a * sigmoid(b)``."""
    _check(input, "glu")
    if input.shape[dim] % 2:
        raise ValueError(f"glu(): dimension {dim} must have an even size, got shape {tuple(input.shape)}")
    a, b = lucid.chunk(input, 2, dim)
    return a * lucid.sigmoid(b)


__all__ = ["silu", "elu", "selu", "celu", "softplus", "mish", "logsigmoid", "softsign", "hardtanh", "prelu", "glu"]
