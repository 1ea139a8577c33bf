"""Quantized layers (``lucid.nn.quantized``), as PyTorch's ``torch.ao.nn.quantized``:
they take and return ``lucid.quantization.QTensor`` activations and compute in
integers (docs/quantization_workflow.md). ``QuantStub``, ``DeQuantStub``,
``QuantWrapper`` and ``FloatFunctional`` are importable from here too."""
from .modules import (ELU, BatchNorm2d, AdaptiveAvgPool2d, DeQuantize, Dropout, Flatten, Hardsigmoid, Hardswish, LeakyReLU,
                      MaxPool2d, Quantize, ReLU, ReLU6, Sigmoid, Tanh)
from .linear import Linear
from .normalization import LayerNorm
from .embedding import Embedding
from .embedding_bag import EmbeddingBag
from .conv import Conv1d, Conv2d, Conv3d
from .conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .functional_modules import FloatFunctional, QFunctional
from ...quantization.stubs import DeQuantStub, QuantStub, QuantWrapper
from . import dynamic  # noqa: F401
from . import reference  # noqa: F401

__all__ = ["Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "Quantize", "DeQuantize", "ReLU", "ReLU6", "Hardswish", "Hardsigmoid", "Sigmoid", "Tanh", "LeakyReLU",
           "ELU", "MaxPool2d", "AdaptiveAvgPool2d", "Flatten", "Dropout", "BatchNorm2d", "LayerNorm", "Embedding",
           "EmbeddingBag",
           "FloatFunctional", "QFunctional", "QuantStub", "DeQuantStub", "QuantWrapper"]
