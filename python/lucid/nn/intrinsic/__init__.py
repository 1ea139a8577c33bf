"""Fused module containers (``lucid.nn.intrinsic``), as PyTorch's ``torch.ao.nn.intrinsic``.

Each is a ``Sequential`` of the modules it fuses, so it runs them in order and
its ``state_dict`` keys read ``"0.weight"``, ``"1.running_mean"``, ...
``lucid.quantization.fuse_modules`` builds them; quantized and QAT layers
later replace them as a unit.

>>> import lucid
>>> from lucid import nn
>>> m = nn.intrinsic.ConvReLU2d(nn.Conv2d(1, 2, 3), nn.ReLU())
>>> m(lucid.ones(1, 1, 4, 4)).shape
(1, 2, 2, 2)
"""
from __future__ import annotations

from .fused_containers import (ConvBn1d, ConvBn2d, ConvBn3d, ConvBnReLU1d, ConvBnReLU2d, ConvBnReLU3d, ConvReLU1d, ConvReLU2d, ConvReLU3d,
                               LinearBn1d, LinearReLU, _FusedModule)

__all__ = ["_FusedModule", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU", "ConvBn1d", "ConvBn2d", "ConvBnReLU1d",
           "ConvBnReLU2d", "ConvBn3d", "ConvBnReLU3d", "LinearBn1d"]


def __getattr__(name):
    if name in ("quantized", "qat"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
