"""Activation layers: thin Modules over ``lucid.nn.functional``."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


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
