"""QAT layers followed by ReLU: ``LinearReLU``, ``ConvReLU1d``, ``ConvReLU2d``, ``ConvReLU3d`` (the QAT
layer's forward, then ``relu``), built from the fused float containers."""
from __future__ import annotations

from ... import functional as F
from ...qat.conv import Conv1d as _QATConv1d
from ...qat.conv import Conv2d as _QATConv2d
from ...qat.conv import Conv3d as _QATConv3d
from ...qat.linear import Linear as _QATLinear
from ...qat.qat_setup import _need_qconfig
from ..fused_containers import ConvReLU1d as _FConvReLU1d
from ..fused_containers import ConvReLU2d as _FConvReLU2d
from ..fused_containers import ConvReLU3d as _FConvReLU3d
from ..fused_containers import LinearReLU as _FLinearReLU

__all__ = ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d"]


def _from_fused(cls, mod, module_name):
    _need_qconfig(f"{cls.__name__}.from_float() of '{module_name or type(mod).__name__}'",
                  getattr(mod, "qconfig", None))
    inner = mod[0]
    inner.qconfig = mod.qconfig
    new = cls.__bases__[0].from_float(inner, module_name=module_name)
    new.__class__ = cls
    return new


class LinearReLU(_QATLinear):
    """QAT Linear followed by ReLU."""

    _FLOAT_MODULE = _FLinearReLU

    def forward(self, input):
        return F.relu(super().forward(input))

    @classmethod
    def from_float(cls, mod, module_name=""):
        return _from_fused(cls, mod, module_name)


class ConvReLU2d(_QATConv2d):
    """QAT Conv2d followed by ReLU."""

    _FLOAT_MODULE = _FConvReLU2d

    def forward(self, input):
        return F.relu(super().forward(input))

    @classmethod
    def from_float(cls, mod, module_name=""):
        return _from_fused(cls, mod, module_name)


class ConvReLU1d(_QATConv1d):
    """QAT Conv1d followed by ReLU."""

    _FLOAT_MODULE = _FConvReLU1d

    def forward(self, input):
        return F.relu(super().forward(input))

    @classmethod
    def from_float(cls, mod, module_name=""):
        return _from_fused(cls, mod, module_name)


class ConvReLU3d(_QATConv3d):
    """QAT Conv3d followed by ReLU."""

    _FLOAT_MODULE = _FConvReLU3d

    def forward(self, input):
        return F.relu(super().forward(input))

    @classmethod
    def from_float(cls, mod, module_name=""):
        return _from_fused(cls, mod, module_name)
