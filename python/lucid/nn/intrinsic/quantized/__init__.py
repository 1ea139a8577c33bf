"""Fused quantized layers (``lucid.nn.intrinsic.quantized``), as PyTorch's
``torch.ao.nn.intrinsic.quantized``: the integer layer with ReLU as the lower clamp bound
of its output codes (``max(code, zero_point)``), exactly ``quantize(relu(y))`` since
quantization is monotone and maps 0 to the zero point. They are defined next to their
unfused layers (``lucid.nn.quantized.linear`` / ``conv``)."""
from __future__ import annotations

from ...quantized.conv import ConvReLU1d, ConvReLU2d, ConvReLU3d
from ...quantized.linear import LinearReLU

__all__ = ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d"]
