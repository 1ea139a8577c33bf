"""Bilinear: ``y = x1^T A x2 + b`` with PyTorch's parameter layout and initialisation."""
from __future__ import annotations

import math

from .. import functional as F
from .. import init
from ..module import Module
from ._factory import check_positive, new_parameter


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
