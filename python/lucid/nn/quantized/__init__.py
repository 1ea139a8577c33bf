"""Quantized layers (``lucid.nn.quantized``), as PyTorch's ``torch.ao.nn.quantized``:
they take and return ``lucid.quantization.QTensor`` activations and compute in
integers (docs/quantization_workflow.md). ``QuantStub``, ``DeQuantStub``,
``QuantWrapper``, ``FloatFunctional`` and the fused ``LinearReLU`` /
``ConvReLU1d/2d/3d`` (also ``lucid.nn.intrinsic.quantized``) are importable from here too.

Loading it registers the QTensor versions of the float ops ``relu``, ``max_pool2d``
and ``adaptive_avg_pool2d`` (``activation``, ``pooling``).
"""
# The quantization core first, before any layer here: importing it runs
# lucid.quantization's __init__, whose workflows import these layers' modules; it must
# finish before the first of them starts loading, or they would find each other half-made.
from ...quantization.stubs import DeQuantStub, QuantStub, QuantWrapper
from .activation import ELU, Hardsigmoid, Hardswish, LeakyReLU, ReLU, ReLU6, Sigmoid, Tanh
from .batchnorm import BatchNorm2d
from .conv import Conv1d, Conv2d, Conv3d, ConvReLU1d, ConvReLU2d, ConvReLU3d
from .conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .dropout import Dropout
from .embedding import Embedding
from .embedding_bag import EmbeddingBag
from .flatten import Flatten
from .float_functional import FloatFunctional, QFunctional
from .linear import Linear, LinearReLU
from .mlx_linear import QuantizedLinearMLX, QuantizedLinearMX
from .normalization import LayerNorm
from .pooling import AdaptiveAvgPool2d, MaxPool2d
from .quantize_dequantize import DeQuantize, Quantize
from . import dynamic  # noqa: F401
from . import reference  # noqa: F401

__all__ = ["Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "Quantize", "DeQuantize", "ReLU", "ReLU6", "Hardswish", "Hardsigmoid", "Sigmoid", "Tanh", "LeakyReLU",
           "ELU", "MaxPool2d", "AdaptiveAvgPool2d", "Flatten", "Dropout", "BatchNorm2d", "LayerNorm", "Embedding",
           "EmbeddingBag", "LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d",
           "FloatFunctional", "QFunctional", "QuantStub", "DeQuantStub", "QuantWrapper", "QuantizedLinearMLX", "QuantizedLinearMX"]
