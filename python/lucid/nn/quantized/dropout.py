"""Quantized ``Dropout``: the identity, as quantized models run in inference."""
from __future__ import annotations

from ..module import Module


class Dropout(Module):
    """Identity (quantized models run in inference)."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = p

    def forward(self, x):
        return x

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls(p=mod.p)
