"""The fused containers (``ConvReLU2d``, ``ConvBn2d``, ``LinearReLU`` ...): each a
``Sequential`` of the exact module types it fuses, checked when built."""
from __future__ import annotations

from ..containers import Sequential
from ..layers import BatchNorm1d, BatchNorm2d, BatchNorm3d, Conv1d, Conv2d, Conv3d, Linear, ReLU

__all__ = ["_FusedModule", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU", "ConvBn1d", "ConvBn2d", "ConvBnReLU1d",
           "ConvBnReLU2d", "ConvBn3d", "ConvBnReLU3d", "LinearBn1d"]


class _FusedModule(Sequential):
    """Base of the fused containers: checks each part's exact type (as PyTorch does)."""

    _parts: tuple = ()

    def __init__(self, *modules):
        name = type(self).__name__
        if len(modules) != len(self._parts):
            raise TypeError(f"{name}: expected {len(self._parts)} modules "
                            f"({', '.join(p.__name__ for p in self._parts)}), got {len(modules)}")
        for i, (m, want) in enumerate(zip(modules, self._parts)):
            if type(m) is not want:
                raise TypeError(f"{name}: module {i} must be a {want.__name__}, got {type(m).__name__}")
        super().__init__(*modules)


def _fused(name, parts, doc):
    return type(name, (_FusedModule,), {"_parts": parts, "__doc__": doc, "__module__": __name__})


ConvReLU1d = _fused("ConvReLU1d", (Conv1d, ReLU), "Conv1d followed by ReLU.")
ConvReLU2d = _fused("ConvReLU2d", (Conv2d, ReLU), "Conv2d followed by ReLU.")
ConvReLU3d = _fused("ConvReLU3d", (Conv3d, ReLU), "Conv3d followed by ReLU.")
LinearReLU = _fused("LinearReLU", (Linear, ReLU), "Linear followed by ReLU.")
ConvBn1d = _fused("ConvBn1d", (Conv1d, BatchNorm1d), "Conv1d followed by BatchNorm1d (kept unfolded, for QAT).")
ConvBn2d = _fused("ConvBn2d", (Conv2d, BatchNorm2d), "Conv2d followed by BatchNorm2d (kept unfolded, for QAT).")
ConvBnReLU1d = _fused("ConvBnReLU1d", (Conv1d, BatchNorm1d, ReLU), "Conv1d, BatchNorm1d, ReLU (for QAT).")
ConvBnReLU2d = _fused("ConvBnReLU2d", (Conv2d, BatchNorm2d, ReLU), "Conv2d, BatchNorm2d, ReLU (for QAT).")
ConvBn3d = _fused("ConvBn3d", (Conv3d, BatchNorm3d), "Conv3d followed by BatchNorm3d (kept unfolded, for QAT).")
ConvBnReLU3d = _fused("ConvBnReLU3d", (Conv3d, BatchNorm3d, ReLU), "Conv3d, BatchNorm3d, ReLU (for QAT).")
LinearBn1d = _fused("LinearBn1d", (Linear, BatchNorm1d), "Linear followed by BatchNorm1d (kept unfolded, for QAT).")
