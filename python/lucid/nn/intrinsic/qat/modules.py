"""The module path upstream lucid's programs import the conv-bn conversion helpers from
(``lucid.nn.intrinsic.qat.modules``): ``_convbn_to_quantized`` turns a trained QAT
``ConvBn*`` / ``ConvBnReLU*`` layer (any rank) into its quantized conv, the BatchNorm
folded; ``convbnrelu2d_to_quantized`` is upstream's 2-d name for the same. The layers
themselves live in ``conv_bn``; ``lucid.quantization.convert`` is the usual way."""
from __future__ import annotations

from ...quantized.conv import Conv1d, Conv2d, Conv3d, ConvReLU1d, ConvReLU2d, ConvReLU3d
from .conv_bn import ConvBn1d, ConvBn2d, ConvBn3d

__all__ = ["_convbn_to_quantized", "convbnrelu2d_to_quantized"]

_RANK = ((ConvBn1d, 1), (ConvBn2d, 2), (ConvBn3d, 3))


def _convbn_to_quantized(mod):
    """The quantized conv of a trained QAT conv-bn layer (its output fake-quant supplies the
    output qparams, its weight fake-quant the weight's); a rectified layer gives ConvReLU."""
    for qat, nd in _RANK:
        if isinstance(mod, qat):
            plain, rectified = {1: (Conv1d, ConvReLU1d), 2: (Conv2d, ConvReLU2d), 3: (Conv3d, ConvReLU3d)}[nd]
            return (rectified if mod._relu else plain).from_float(mod)
    raise TypeError(f"_convbn_to_quantized(): expected a QAT ConvBn / ConvBnReLU layer, got {type(mod).__name__}")


convbnrelu2d_to_quantized = _convbn_to_quantized
