"""Activation layers, thin Modules over ``lucid.nn.functional``: the ReLU family,
Sigmoid / Tanh, Softmax / LogSoftmax / Softmin / Softmax2d, the smooth and
parametric activations (SiLU, ELU, CELU, SELU, Softplus, Mish, LogSigmoid,
Softsign, Hardtanh, GLU, PReLU, RReLU), Threshold and the shrinks."""
from __future__ import annotations

import lucid._namespace as lucid

from .. import functional as F
from ..module import Module
from ..parameter import Parameter


class ReLU(Module):
    """``max(x, 0)``.

    >>> import lucid
    >>> lucid.nn.ReLU()(lucid.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class ReLU6(ReLU):
    """``min(max(x, 0), 6)``."""

    def forward(self, input):
        return F.relu6(input, inplace=self.inplace)


class LeakyReLU(Module):
    """``x`` if ``x > 0`` else ``negative_slope * x``."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, inplace=self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}"


class GELU(Module):
    """``x * Phi(x)``; ``approximate='tanh'`` for the tanh form."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: argument 'approximate' must be 'none' or 'tanh', got '{approximate}'")
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input):
        return F.tanh(input)


class Hardswish(ReLU):
    """``x * clamp(x + 3, 0, 6) / 6``."""

    def forward(self, input):
        return F.hardswish(input)


class Hardsigmoid(ReLU):
    """``clamp(x / 6 + 1/2, 0, 1)``."""

    def forward(self, input):
        return F.hardsigmoid(input)


class Softmax(Module):
    """Softmax along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)


class LogSoftmax(Softmax):
    """Log-softmax along ``dim``."""

    def forward(self, input):
        return F.log_softmax(input, self.dim)


class SiLU(Module):
    """``x * sigmoid(x)``.

    >>> import lucid
    >>> round(lucid.nn.SiLU()(lucid.tensor([1.0])).item(), 4)
    0.7311
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input)


class ELU(Module):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha)

    def extra_repr(self):
        return f"alpha={self.alpha}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def forward(self, input):
        return F.celu(input, self.alpha)


class SELU(SiLU):
    """``scale * elu(x, alpha)`` with SELU's constants."""

    def forward(self, input):
        return F.selu(input)


class Softplus(Module):
    """``log(1 + exp(beta x)) / beta`` (``x`` where ``beta x > threshold``)."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(SiLU):
    """``x * tanh(softplus(x))``."""

    def forward(self, input):
        return F.mish(input)


class LogSigmoid(Module):
    """``log(sigmoid(x))``."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input):
        return F.softsign(input)


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val)


class GLU(Module):
    """Gated linear unit along ``dim``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)


class PReLU(Module):
    """``x`` for ``x > 0``, else ``a * x`` with a learned ``weight`` of ``num_parameters``
    entries (1, or one per channel), all starting at ``init``.

    >>> import lucid
    >>> lucid.nn.PReLU()(lucid.tensor([-4.0, 1.0])).tolist()
    [-1.0, 1.0]
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        if not isinstance(num_parameters, int) or num_parameters <= 0:
            raise ValueError(f"PReLU: argument 'num_parameters' must be a positive int, got {num_parameters!r}")
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(lucid.full((num_parameters,), float(init), dtype=dtype or lucid.float32,
                                           device=device))

    def reset_parameters(self):
        with lucid.no_grad():
            self.weight.copy_(lucid.full_like(self.weight, float(self.init)))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU; see ``lucid.nn.functional.rrelu``."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}"


class Softmin(Module):
    """``softmax(-x)`` along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim)


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W)."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
        return F.softmax(input, -3)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}"


class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Softshrink(Hardshrink):
    """``x -+ lambd`` outside ``[-lambd, lambd]``, else 0."""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input):
        return F.tanhshrink(input)


__all__ = ["ReLU", "ReLU6", "LeakyReLU", "GELU", "Sigmoid", "Tanh", "Hardswish", "Hardsigmoid", "Softmax",
           "LogSoftmax", "SiLU", "ELU", "CELU", "SELU", "Softplus", "Mish", "LogSigmoid", "Softsign", "Hardtanh",
           "GLU", "PReLU", "RReLU", "Softmin", "Softmax2d", "Threshold", "Hardshrink", "Softshrink", "Tanhshrink"]
