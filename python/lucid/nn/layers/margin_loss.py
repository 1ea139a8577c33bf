"""Loss modules over ``lucid.nn.functional.margin_loss``, with PyTorch's
constructor signatures (the deprecated ``size_average`` / ``reduce`` flags decide
the reduction when given; class weights are buffers, so they appear in state
dicts): MarginRankingLoss, TripletMarginLoss, TripletMarginWithDistanceLoss,
CosineEmbeddingLoss, SoftMarginLoss, MultiLabelSoftMarginLoss,
HingeEmbeddingLoss, MultiMarginLoss, MultiLabelMarginLoss."""
from __future__ import annotations

from .. import functional as F
from ..module import Module
from .loss import _Loss, _WeightedLoss


class MarginRankingLoss(_Loss):
    """``F.margin_ranking_loss`` with ``margin``.

    >>> import lucid
    >>> lucid.nn.MarginRankingLoss(0.5)(lucid.tensor([1.0]), lucid.tensor([1.0]), lucid.tensor([1.0])).item()
    0.5
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``F.triplet_margin_loss`` with ``margin``, ``p``, ``eps`` and ``swap``."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """``F.triplet_margin_with_distance_loss`` with ``distance_function`` (default
    ``pairwise_distance``), ``margin`` and ``swap`` (keyword-only, as PyTorch)."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(None, None, reduction)
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``F.cosine_embedding_loss`` with ``margin``."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """``F.soft_margin_loss``: ``log(1 + exp(-y x))``."""

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """``F.multilabel_soft_margin_loss`` with an optional per-class ``weight`` (a buffer)."""

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``F.hinge_embedding_loss`` with ``margin``."""

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """``F.multi_margin_loss`` with ``p`` (1 or 2), ``margin`` and an optional per-class ``weight``."""

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        if p not in (1, 2) or isinstance(p, bool):  # checked before anything is stored
            raise ValueError(f"MultiMarginLoss: argument 'p' must be 1 or 2, got {p!r}")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: argument 'weight' must be 1-D, got shape {tuple(weight.shape)}")
        super().__init__(weight, size_average, reduce, reduction)
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(Module):
    """See ``lucid.nn.functional.multilabel_margin_loss``."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.size_average, self.reduce, self.reduction = size_average, reduce, reduction

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, self.size_average, self.reduce, self.reduction)


__all__ = ["MarginRankingLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CosineEmbeddingLoss",
           "SoftMarginLoss", "MultiLabelSoftMarginLoss", "HingeEmbeddingLoss", "MultiMarginLoss",
           "MultiLabelMarginLoss"]
