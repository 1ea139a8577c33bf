"""Upsample (and the UpsamplingNearest2d / UpsamplingBilinear2d aliases), Dropout2d,
CosineSimilarity, PairwiseDistance, Unfold, Fold."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class Upsample(Module):
    """``F.interpolate`` with stored ``size`` / ``scale_factor`` / ``mode`` / ``align_corners``.

    >>> import lucid
    >>> lucid.nn.Upsample(scale_factor=2)(lucid.ones(1, 1, 2, 2)).shape
    (1, 1, 4, 4)
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)

    def extra_repr(self):
        what = f"size={self.size}" if self.size is not None else f"scale_factor={self.scale_factor}"
        return f"{what}, mode='{self.mode}'"


class Dropout2d(Module):
    """Zeroes whole channels with probability ``p`` in training mode (the rest scaled by
    ``1 / (1 - p)``); identity in eval mode."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout2d: probability 'p' must be between 0 and 1, got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class CosineSimilarity(Module):
    """``F.cosine_similarity`` along ``dim``."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``F.pairwise_distance``."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class Unfold(Module):
    """``F.unfold`` (im2col) with stored options."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(Module):
    """``F.fold`` (col2im) with stored options."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)


class UpsamplingNearest2d(Module):
    """``interpolate(mode='nearest')`` on (N, C, H, W) (PyTorch's deprecated alias)."""

    _mode, _align = "nearest", None

    def __init__(self, size=None, scale_factor=None):
        super().__init__()
        self.size, self.scale_factor = size, scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self._mode, self._align)


class UpsamplingBilinear2d(UpsamplingNearest2d):
    """``interpolate(mode='bilinear', align_corners=True)`` on (N, C, H, W), as PyTorch's alias."""

    _mode, _align = "bilinear", True
