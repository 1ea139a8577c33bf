"""MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d, LPPool1d / LPPool2d,
LocalResponseNorm, AlphaDropout / FeatureAlphaDropout and EmbeddingBag: modules over
``lucid.nn.functional`` with PyTorch's constructor arguments and parameter layout."""
from __future__ import annotations

import lucid

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ._factory import check_positive


class MaxPool3d(Module):
    """Max over (kd, kh, kw) windows; see ``lucid.nn.functional.max_pool3d``."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        if return_indices:
            raise NotImplementedError("MaxPool3d: return_indices=True is not implemented")
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.dilation, self.ceil_mode = dilation, ceil_mode

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(Module):
    """Mean over (kd, kh, kw) windows; see ``lucid.nn.functional.avg_pool3d``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool3d(Module):
    """Mean over an output_size grid of adaptive bins."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(AdaptiveAvgPool3d):
    """Max over an output_size grid of adaptive bins."""

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        if return_indices:
            raise NotImplementedError("AdaptiveMaxPool3d: return_indices=True is not implemented")

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size)


class LPPool2d(Module):
    """``(sum of x^p over each window)^(1/p)``; see ``lucid.nn.functional.lp_pool2d``."""

    _fn = staticmethod(F.lp_pool2d)

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}"


class LPPool1d(LPPool2d):
    """The 1-D form of LPPool2d over (N, C, L)."""

    _fn = staticmethod(F.lp_pool1d)


class LocalResponseNorm(Module):
    """``x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta``."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class AlphaDropout(Module):
    """SELU-preserving dropout in training mode; identity in eval mode."""

    _fn = staticmethod(F.alpha_dropout)

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{type(self).__name__}: probability 'p' must be between 0 and 1, got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class FeatureAlphaDropout(AlphaDropout):
    """AlphaDropout with one draw per channel."""

    _fn = staticmethod(F.feature_alpha_dropout)


class EmbeddingBag(Module):
    """Sums / means / maxima of bags of embedding rows; weight (num_embeddings, embedding_dim)
    initialised N(0, 1) (the ``padding_idx`` row zeroed), as PyTorch.
    ``forward(input, offsets=None, per_sample_weights=None)``; see
    ``lucid.nn.functional.embedding_bag``.

    >>> import lucid
    >>> bag = lucid.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag(lucid.tensor([1, 2, 4, 5]), lucid.tensor([0, 2])).shape
    (2, 3)
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        check_positive(num_embeddings, "EmbeddingBag", "num_embeddings")
        check_positive(embedding_dim, "EmbeddingBag", "embedding_dim")
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: argument 'mode' must be 'sum', 'mean' or 'max', got {mode!r}")
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("EmbeddingBag: max_norm, scale_grad_by_freq and sparse are not implemented")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"EmbeddingBag: padding_idx must be within [-{num_embeddings}, {num_embeddings}), "
                                 f"got {padding_idx}")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        if _weight is None:
            self.weight = Parameter(lucid.zeros(num_embeddings, embedding_dim, dtype=dtype, device=device))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"EmbeddingBag: _weight must have shape {(num_embeddings, embedding_dim)}, got "
                                 f"{tuple(_weight.shape)}")
            self.weight = Parameter(_weight)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with lucid.no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, mode=self.mode, per_sample_weights=per_sample_weights,
                               include_last_offset=self.include_last_offset, padding_idx=self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag holding ``embeddings`` (2-D); ``freeze`` stops its gradient."""
        if embeddings.ndim != 2:
            raise ValueError(f"EmbeddingBag.from_pretrained(): expected 2-D embeddings, got shape "
                             f"{tuple(embeddings.shape)}")
        bag = cls(embeddings.shape[0], embeddings.shape[1], max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings, include_last_offset, padding_idx, device=embeddings.device)
        bag.weight.requires_grad = not freeze
        return bag

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"


__all__ = ["MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d",
           "LocalResponseNorm", "AlphaDropout", "FeatureAlphaDropout", "EmbeddingBag"]


class RReLU(Module):
    """Randomized leaky ReLU; see ``lucid.nn.functional.rrelu``."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}"


__all__ += ["RReLU"]


class _MaxUnpoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d(return_indices=True)."""

    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d(return_indices=True)."""

    _fn = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The 3-D form of MaxUnpool2d (indices from elsewhere: lucid's MaxPool3d has no return_indices)."""

    _fn = staticmethod(F.max_unpool3d)


class MultiLabelMarginLoss(Module):
    """See ``lucid.nn.functional.multilabel_margin_loss``."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.size_average, self.reduce, self.reduction = size_average, reduce, reduction

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, self.size_average, self.reduce, self.reduction)


class CTCLoss(Module):
    """Connectionist temporal classification loss; see ``lucid.nn.functional.ctc_loss``."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__()
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


__all__ += ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "MultiLabelMarginLoss", "CTCLoss"]
