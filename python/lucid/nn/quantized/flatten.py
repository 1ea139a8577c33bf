"""Quantized ``Flatten``: reshapes the codes of a QTensor (a float input is flattened as is)."""
from __future__ import annotations

from ..module import Module


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls(start_dim=mod.start_dim, end_dim=mod.end_dim)
