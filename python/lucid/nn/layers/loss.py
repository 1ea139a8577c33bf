"""Loss modules over ``lucid.nn.functional.loss`` (PyTorch's constructor
signatures): CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, BCELoss,
BCEWithLogitsLoss, SmoothL1Loss, HuberLoss, KLDivLoss, PoissonNLLLoss,
GaussianNLLLoss and CTCLoss. Where PyTorch's constructor takes the deprecated
``size_average`` / ``reduce`` flags, they decide the reduction when given; class
weights are buffers, so they appear in state dicts."""
from __future__ import annotations

from .. import functional as F
from ..functional.loss import _legacy
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


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = _legacy(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class PoissonNLLLoss(_Loss):
    """``F.poisson_nll_loss`` with ``log_input``, ``full`` and ``eps`` (PyTorch's argument order)."""

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """``F.gaussian_nll_loss``; ``forward(input, target, var)``. Keyword-only options, as PyTorch."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class CTCLoss(Module):
    """Connectionist temporal classification loss; see ``lucid.nn.functional.ctc_loss``."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__()
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss", "SmoothL1Loss",
           "HuberLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss"]
