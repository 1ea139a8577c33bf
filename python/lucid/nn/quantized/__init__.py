"""Quantized layers (``lucid.nn.quantized``), as PyTorch's ``torch.ao.nn.quantized``:
they take and return ``lucid.quantization.QTensor`` activations and compute in
integers (docs/quantization_workflow.md). ``QuantStub``, ``DeQuantStub``,
``QuantWrapper``, ``FloatFunctional`` and the fused ``LinearReLU`` /
``ConvReLU1d/2d/3d`` (from ``lucid.nn.intrinsic.quantized``) are importable from here too."""
from .modules import (ELU, BatchNorm2d, AdaptiveAvgPool2d, DeQuantize, Dropout, Flatten, Hardsigmoid, Hardswish, LeakyReLU,
                      MaxPool2d, Quantize, ReLU, ReLU6, Sigmoid, Tanh)
from .linear import Linear
from .normalization import LayerNorm
from .embedding import Embedding
from .embedding_bag import EmbeddingBag
from .conv import Conv1d, Conv2d, Conv3d
from .conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .functional_modules import FloatFunctional, QFunctional
from .mlx_linear import QuantizedLinearMLX
from ...quantization.stubs import DeQuantStub, QuantStub, QuantWrapper
from . import dynamic  # noqa: F401
from . import reference  # noqa: F401

__all__ = ["Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "Quantize", "DeQuantize", "ReLU", "ReLU6", "Hardswish", "Hardsigmoid", "Sigmoid", "Tanh", "LeakyReLU",
           "ELU", "MaxPool2d", "AdaptiveAvgPool2d", "Flatten", "Dropout", "BatchNorm2d", "LayerNorm", "Embedding",
           "EmbeddingBag", "LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d",
           "FloatFunctional", "QFunctional", "QuantStub", "DeQuantStub", "QuantWrapper", "QuantizedLinearMLX"]


_FUSED = ("LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d")


def __getattr__(name):
    # The fused layers live in lucid.nn.intrinsic.quantized (PyTorch's home for them),
    # which imports this package; resolving them on first use avoids the import cycle.
    if name in _FUSED:
        from ..intrinsic import quantized as nniq
        return getattr(nniq, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
