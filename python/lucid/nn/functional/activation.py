"""Activations of ``lucid.nn.functional``: the ReLU family, the sigmoid / tanh
family, softmax and its relatives (log_softmax, softmin, gumbel_softmax), the
smooth and parametric activations (silu, elu, selu, celu, softplus, mish, prelu,
rrelu, glu ...) and the thresholds and shrinks.

softmax / log_softmax and softplus run and record in C++ (one call each); the
rest are compositions of lucid ops. Branches that would overflow on the side
``where`` discards (``exp`` of a large positive input in elu) are computed on a
clamped input, so the discarded branch never produces ``inf * 0 = nan`` in the
gradient.
"""
from __future__ import annotations

import numbers

import lucid._namespace as lucid

from ... import _C
from ..._ops.autocast import autocast_op
from ..._ops.common import quantized_op
from ...autograd.function import Function
from ._inplace import _maybe_inplace


def relu(input, inplace=False):
    """``max(x, 0)``.

    >>> import lucid
    >>> lucid.nn.functional.relu(lucid.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    if type(input).__name__ == "QTensor":  # nn.quantized registers the integer form: max(code, zero_point)
        return quantized_op("relu")(input)
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


@autocast_op("float32")
def softmax(input, dim=None, dtype=None):
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (the max shift keeps it finite).

    >>> import lucid
    >>> [round(v, 4) for v in lucid.nn.functional.softmax(lucid.tensor([1000.0, 1000.0, 0.0]), dim=0).tolist()]
    [0.5, 0.5, 0.0]
    """
    if dtype is not None:
        input = input.to(dtype)
    return _C.autograd_softmax(input, dim, False)  # the ops and (when recording) SoftmaxBackward: one C++ call


@autocast_op("float32")
def log_softmax(input, dim=None, dtype=None):
    """``x - max - log(sum(exp(x - max)))`` along ``dim``.

    >>> import lucid
    >>> round(lucid.nn.functional.log_softmax(lucid.tensor([0.0, 0.0]), dim=0).tolist()[0], 4)
    -0.6931
    """
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


def softmin(input, dim=None, dtype=None):
    """``softmax(-input)`` along ``dim``."""
    return softmax(-input, dim, dtype=dtype) if dtype is not None else softmax(-input, dim)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """``softmax((logits + g) / tau)`` with Gumbel(0, 1) noise g; with ``hard`` the one-hot
    of its argmax in the forward and the soft sample's gradient (straight-through)."""
    if not tau > 0:
        raise ValueError(f"gumbel_softmax(): argument 'tau' must be positive, got {tau}")
    u = lucid.rand(tuple(logits.shape), device=logits.device).to(logits.dtype)
    exp1 = (-lucid.log(u.clamp(min=1e-20))).clamp(min=1e-20)  # an Exponential(1) draw, kept off 0
    gumbels = -lucid.log(exp1)
    y = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    d = dim % logits.ndim
    index = lucid.argmax(y, dim=d, keepdim=True)
    hard_y = lucid.zeros_like(y).scatter(d, index, 1.0)
    return hard_y - y.detach() + y


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


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: negative inputs times a slope drawn U(lower, upper) per
    element in training, times ``(lower + upper) / 2`` otherwise."""
    if not lower <= upper:
        raise ValueError(f"rrelu(): expected lower <= upper, got {lower} and {upper}")
    if training:
        slope = lucid.rand(tuple(input.shape), device=input.device).to(input.dtype) * (upper - lower) + lower
    else:
        slope = (lower + upper) / 2.0
    out = lucid.where(input >= 0, input, input * slope)
    return input.copy_(out) if inplace else out


def threshold(input, threshold, value, inplace=False):  # noqa: A002 (PyTorch's argument name)
    """``input`` where ``input > threshold``, else ``value``."""
    out = lucid.where(input > threshold, input, lucid.full((), float(value), dtype=input.dtype, device=input.device))
    return input.copy_(out) if inplace else out


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    return lucid.where(lucid.abs(input) > lambd, input, lucid.zeros_like(input))


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    if lambd < 0:
        raise ValueError(f"softshrink(): argument 'lambd' must be non-negative, got {lambd}")
    zero = lucid.zeros_like(input)
    return lucid.where(input > lambd, input - lambd, lucid.where(input < -lambd, input + lambd, zero))


def tanhshrink(input):
    """``x - tanh(x)``."""
    return input - lucid.tanh(input)


__all__ = ["relu", "relu6", "leaky_relu", "gelu", "sigmoid", "tanh", "hardswish", "hardsigmoid", "softmax",
           "log_softmax", "softmin", "gumbel_softmax", "silu", "elu", "selu", "celu", "softplus", "mish",
           "logsigmoid", "softsign", "hardtanh", "prelu", "glu", "rrelu", "threshold", "hardshrink", "softshrink",
           "tanhshrink"]
