"""Loss modules: BCELoss, BCEWithLogitsLoss, SmoothL1Loss, HuberLoss, KLDivLoss."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class BCELoss(Module):
    """Binary cross-entropy on probabilities (``F.binary_cross_entropy``)."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__()
        self.register_buffer("weight", weight)
        self.reduction = reduction

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(Module):
    """Binary cross-entropy on logits with optional ``pos_weight`` (``F.binary_cross_entropy_with_logits``).

    >>> import lucid
    >>> round(lucid.nn.BCEWithLogitsLoss()(lucid.tensor([0.0]), lucid.tensor([1.0])).item(), 4)
    0.6931
    """

    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__()
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.reduction = reduction

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction, self.pos_weight)


class SmoothL1Loss(Module):
    """``F.smooth_l1_loss`` with ``beta``."""

    def __init__(self, reduction="mean", beta=1.0):
        super().__init__()
        self.reduction, self.beta = reduction, beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class HuberLoss(Module):
    """``F.huber_loss`` with ``delta``."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__()
        self.reduction, self.delta = reduction, delta

    def forward(self, input, target):
        return F.huber_loss(input, target, self.reduction, self.delta)


class KLDivLoss(Module):
    """``F.kl_div`` (input: log-probabilities; ``reduction='batchmean'`` for the true KL mean)."""

    def __init__(self, reduction="mean", log_target=False):
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
