"""The module path upstream lucid's programs import the quantization primitives from
(``lucid.quantization._functional``); lucid's home for them is ``primitives``."""
from __future__ import annotations

from .primitives import dequantize, fake_quantize, quantize

__all__ = ["quantize", "dequantize", "fake_quantize"]
