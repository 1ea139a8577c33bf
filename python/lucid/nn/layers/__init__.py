"""The layer classes of ``lucid.nn`` (containers live in ``nn.containers``)."""
from .activation import (GELU, Hardsigmoid, Hardswish, LeakyReLU, LogSoftmax, ReLU, ReLU6, Sigmoid, Softmax,
                         Tanh)
from .conv import Conv1d, Conv2d
from .dropout import Dropout
from .linear import Flatten, Identity, Linear
from .loss import CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .normalization import BatchNorm1d, BatchNorm2d
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .sparse import Embedding

__all__ = [
    "Linear", "Identity", "Flatten", "Conv1d", "Conv2d", "BatchNorm1d", "BatchNorm2d",
    "ReLU", "ReLU6", "LeakyReLU", "GELU", "Sigmoid", "Tanh", "Hardswish", "Hardsigmoid", "Softmax", "LogSoftmax",
    "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "Dropout", "Embedding",
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss",
]
