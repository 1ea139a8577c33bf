"""Linear, Bilinear (``y = x1^T A x2 + b``, PyTorch's parameter layout and
initialisation) and Identity."""
from __future__ import annotations

import math

from .. import functional as F
from .. import init
from ..module import Module
from ._constructor import check_positive, new_parameter


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


class Bilinear(Module):
    """``y[..., o] = x1 weight[o] x2 + bias[o]``; weight (out_features, in1_features,
    in2_features), bias (out_features,), both ~ U(-1/sqrt(in1), 1/sqrt(in1)) as PyTorch.

    >>> import lucid
    >>> lucid.nn.Bilinear(3, 4, 2)(lucid.ones(5, 3), lucid.ones(5, 4)).shape
    (5, 2)
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = check_positive(in1_features, "Bilinear", "in1_features")
        self.in2_features = check_positive(in2_features, "Bilinear", "in2_features")
        self.out_features = check_positive(out_features, "Bilinear", "out_features")
        self.weight = new_parameter((out_features, in1_features, in2_features), device, dtype)
        self.bias = new_parameter((out_features,), device, dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


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


__all__ = ["Linear", "Bilinear", "Identity"]
