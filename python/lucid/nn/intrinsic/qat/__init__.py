"""Fused QAT layers (``lucid.nn.intrinsic.qat``), as PyTorch's ``torch.ao.nn.intrinsic.qat``.

``ConvBn2d`` / ``ConvBnReLU2d`` (and 1d) keep the BatchNorm unfolded during training so
its statistics keep updating: the weight is scaled by ``gamma / sqrt(running_var + eps)``
before its fake quantization, the convolution's output is scaled back and the BatchNorm
runs on the batch (PyTorch's approach). In eval mode, or once ``freeze_bn_stats()`` has
been called, the forward is the folded layer itself — ``conv(x, fq(w'), b')`` with
``(w', b')`` folded exactly as ``fuse_modules`` folds them — so ``convert`` reproduces it.

>>> import lucid
>>> import lucid.quantization as Q
>>> from lucid import nn
>>> fused = nn.intrinsic.ConvBn2d(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
>>> fused.qconfig = Q.default_qat_qconfig
>>> m = nn.intrinsic.qat.ConvBn2d.from_float(fused)
>>> m(lucid.ones(2, 1, 4, 4)).shape
(2, 2, 2, 2)
"""
from __future__ import annotations

from .conv_bn import ConvBn1d, ConvBn2d, ConvBn3d, ConvBnReLU1d, ConvBnReLU2d, ConvBnReLU3d, freeze_bn_stats, update_bn_stats
from .relu_fused import ConvReLU1d, ConvReLU2d, ConvReLU3d, LinearReLU

__all__ = ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "ConvBn1d", "ConvBn2d", "ConvBn3d", "ConvBnReLU1d", "ConvBnReLU2d", "ConvBnReLU3d",
           "update_bn_stats", "freeze_bn_stats"]
