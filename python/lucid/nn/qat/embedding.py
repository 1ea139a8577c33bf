"""QAT ``Embedding``: lookups in ``weight_fake_quant(weight)``."""
from __future__ import annotations

from .. import functional as F
from ..layers import Embedding as _Embedding
from .qat_setup import _init_qat, _need_qconfig


class Embedding(_Embedding):
    """QAT Embedding: lookups in ``weight_fake_quant(weight)`` (per-row weights, as PyTorch's
    QAT embedding uses; the qconfig's activation must be a no-op)."""

    _FLOAT_MODULE = _Embedding

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, qconfig=None, device=None, dtype=None):
        super().__init__(num_embeddings, embedding_dim, padding_idx, device, dtype)
        _init_qat(self, qconfig)

    def forward(self, input):
        return F.embedding(input, self.weight_fake_quant(self.weight), self.padding_idx)

    @classmethod
    def from_float(cls, mod, module_name=""):
        _need_qconfig(f"{cls.__name__}.from_float() of '{module_name or type(mod).__name__}'",
                      getattr(mod, "qconfig", None))
        new = cls(mod.num_embeddings, mod.embedding_dim, padding_idx=mod.padding_idx, qconfig=mod.qconfig)
        new.weight = mod.weight
        return new.to(mod.weight.device)
