"""``QuantStub`` / ``DeQuantStub`` mark where a model's quantized region starts and ends;
``QuantWrapper`` puts them around a module. ``convert`` turns them into
``nn.quantized.Quantize`` / ``DeQuantize``. Plain modules, below the quantized layers
(``lucid.nn.quantized`` re-exports them); ``add_quant_dequant`` is a workflow
(``workflows``).

>>> from lucid import nn
>>> import lucid.quantization as Q
>>> w = Q.QuantWrapper(nn.Linear(2, 2))
>>> [name for name, _ in w.named_children()]
['quant', 'dequant', 'module']
"""
from __future__ import annotations

from ..nn.module import Module

__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper"]


class QuantStub(Module):
    """Identity until converted; after ``prepare`` its observer records the input range,
    and ``convert`` replaces it with ``nn.quantized.Quantize`` (float -> QTensor)."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig is not None:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(Module):
    """Identity until converted to ``nn.quantized.DeQuantize`` (QTensor -> float)."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig is not None:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantWrapper(Module):
    """``dequant(module(quant(x)))``; carries the wrapped module's ``qconfig``."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, x):
        return self.dequant(self.module(self.quant(x)))
