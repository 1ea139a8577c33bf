"""QAT ``Linear``: ``linear(x, weight_fake_quant(weight), bias)``."""
from __future__ import annotations

from .. import functional as F
from ..layers import Linear as _Linear
from .qat_setup import _copy_params, _init_qat, _need_qconfig


class Linear(_Linear):
    """``Linear(in_features, out_features, bias=True, qconfig=...)``: ``linear(x, weight_fake_quant(weight), bias)``."""

    _FLOAT_MODULE = _Linear

    def __init__(self, in_features, out_features, bias=True, qconfig=None, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        _init_qat(self, qconfig)

    def forward(self, input):
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, module_name=""):
        _need_qconfig(f"{cls.__name__}.from_float() of '{module_name or type(mod).__name__}'",
                      getattr(mod, "qconfig", None))
        new = cls(mod.in_features, mod.out_features, bias=mod.bias is not None, qconfig=mod.qconfig)
        return _copy_params(new, mod)

    def to_float(self):
        new = _Linear(self.in_features, self.out_features, self.bias is not None)
        return _copy_params(new, self)
