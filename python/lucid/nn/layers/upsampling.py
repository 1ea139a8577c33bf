"""Upsample and its UpsamplingNearest2d / UpsamplingBilinear2d aliases (``F.interpolate``)."""
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


__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
