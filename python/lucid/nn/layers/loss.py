"""Loss modules over ``lucid.nn.functional``'s losses."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class CrossEntropyLoss(Module):
    """``F.cross_entropy`` with stored options (weight, ignore_index, reduction, label_smoothing).

    >>> import lucid
    >>> round(lucid.nn.CrossEntropyLoss()(lucid.tensor([[0.0, 0.0]]), lucid.tensor([0])).item(), 4)
    0.6931
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__()
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing)


class NLLLoss(Module):
    """``F.nll_loss`` with stored options."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__()
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction = ignore_index, reduction

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class MSELoss(Module):
    """Mean squared error (``reduction`` 'mean', 'sum' or 'none')."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class L1Loss(Module):
    """Mean absolute error (``reduction`` 'mean', 'sum' or 'none')."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.l1_loss(input, target, self.reduction)
