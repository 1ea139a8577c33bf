"""Linear, Identity and Flatten."""
from __future__ import annotations

import math

from .. import functional as F
from .. import init
from ..module import Module
from ._factory import check_positive, new_parameter


class Linear(Module):
    """``y = x @ weight.T + bias`` over the last axis.

    weight (out_features, in_features) ~ kaiming_uniform_(a=sqrt(5)), i.e.
    U(-1/sqrt(in), 1/sqrt(in)); bias ~ U(-1/sqrt(in), 1/sqrt(in)) (PyTorch's
    defaults). Input (*, in_features) -> (*, out_features); ValueError when the
    last axis differs from in_features.

    >>> import lucid
    >>> lucid.nn.Linear(3, 2)(lucid.ones(4, 3)).shape
    (4, 2)
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = check_positive(in_features, "Linear", "in_features") if in_features else in_features
        self.out_features = check_positive(out_features, "Linear", "out_features")
        self.weight = new_parameter((out_features, in_features), device, dtype)
        self.bias = new_parameter((out_features,), device, dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        if input.ndim == 0 or input.shape[-1] != self.in_features:
            raise ValueError(f"Linear: expected input of shape (*, {self.in_features}), got {tuple(input.shape)}")
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Identity(Module):
    """Returns its input (any arguments to the constructor are ignored, as in PyTorch).

    >>> import lucid
    >>> lucid.nn.Identity()(lucid.tensor([1.0])).tolist()
    [1.0]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Module):
    """Merges axes ``start_dim..end_dim`` (default: all but the batch axis).

    >>> import lucid
    >>> lucid.nn.Flatten()(lucid.ones(2, 3, 4)).shape
    (2, 12)
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return F.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
