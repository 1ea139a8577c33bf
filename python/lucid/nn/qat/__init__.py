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

from .conv import Conv1d, Conv2d
from .embedding import Embedding
from .linear import Linear

__all__ = ["Linear", "Conv1d", "Conv2d", "Embedding"]
