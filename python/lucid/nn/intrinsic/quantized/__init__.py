"""Fused quantized layers (``lucid.nn.intrinsic.quantized``): the integer layer with
ReLU as the lower clamp bound of its output codes (``max(code, zero_point)``), exactly
``quantize(relu(y))`` since quantization is monotone and maps 0 to the zero point."""
from __future__ import annotations

from ...quantized.conv import Conv1d as _QConv1d
from ...quantized.conv import Conv2d as _QConv2d
from ...quantized.conv import Conv3d as _QConv3d
from ...quantized.linear import Linear as _QLinear

__all__ = ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d"]


class LinearReLU(_QLinear):
    """Quantized Linear followed by ReLU, in one integer kernel call."""

    _relu = True


class ConvReLU2d(_QConv2d):
    """Quantized Conv2d followed by ReLU."""

    _relu = True


class ConvReLU1d(_QConv1d):
    """Quantized Conv1d followed by ReLU."""

    _relu = True


class ConvReLU3d(_QConv3d):
    """Quantized Conv3d followed by ReLU."""

    _relu = True
