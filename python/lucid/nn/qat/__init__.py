"""Quantization-aware training layers (``lucid.nn.qat``), as PyTorch's ``torch.ao.nn.qat``:
the float layer with its weight passed through ``weight_fake_quant`` (built from the
``qconfig`` the layer must be given; ``ValueError`` naming ``qconfig`` otherwise). The
output's fake quantization is the ``activation_post_process`` that ``prepare_qat`` adds.

>>> import lucid
>>> import lucid.quantization as Q
>>> m = lucid.nn.qat.Linear(4, 2, qconfig=Q.default_qat_qconfig)
>>> m(lucid.ones(1, 4)).shape
(1, 2)
"""
from __future__ import annotations

from .conv import Conv1d, Conv2d, Conv3d
from .embedding import Embedding
from .linear import Linear
# upstream lucid exports the fused QAT forms here too (their home is nn.intrinsic.qat);
# imported after .conv / .linear, which they build on
from ..intrinsic.qat.relu_fused import ConvReLU1d, ConvReLU2d, ConvReLU3d, LinearReLU

__all__ = ["Linear", "Conv1d", "Conv2d", "Conv3d", "Embedding", "LinearReLU", "ConvReLU1d", "ConvReLU2d",
           "ConvReLU3d"]
