"""QAT ``Conv1d`` / ``Conv2d`` / ``Conv3d``: the convolution over ``weight_fake_quant(weight)``."""
from __future__ import annotations

from ..layers import Conv1d as _Conv1d
from ..layers import Conv2d as _Conv2d
from ..layers import Conv3d as _Conv3d
from .qat_setup import _copy_params, _init_qat, _need_qconfig


class _QATConv:
    """A QAT conv over the float conv ``_CONV`` it also derives from: that layer's
    constructor plus ``qconfig``, and ``conv(x, weight_fake_quant(weight), bias)``.
    ``_FLOAT_MODULE`` is what ``to_float`` / ``from_float`` convert to and from (the
    fused subclasses replace it; ``_CONV`` stays the conv)."""

    _FLOAT_MODULE = None
    _CONV = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", qconfig=None, device=None, dtype=None):
        self._CONV.__init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                            bias, padding_mode, device, dtype)
        self._qat_init(qconfig)

    def _qat_init(self, qconfig):
        _init_qat(self, qconfig)

    def forward(self, input):
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, module_name=""):
        _need_qconfig(f"{cls.__name__}.from_float() of '{module_name or type(mod).__name__}'",
                      getattr(mod, "qconfig", None))
        new = cls(mod.in_channels, mod.out_channels, mod.kernel_size, stride=mod.stride, padding=mod.padding,
                  dilation=mod.dilation, groups=mod.groups, bias=mod.bias is not None, padding_mode=mod.padding_mode,
                  qconfig=mod.qconfig)
        return _copy_params(new, mod)

    def to_float(self):
        new = self._FLOAT_MODULE(self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding,
                                 self.dilation, self.groups, self.bias is not None, self.padding_mode)
        return _copy_params(new, self)


class Conv1d(_QATConv, _Conv1d):
    """QAT Conv1d: ``conv1d(x, weight_fake_quant(weight), bias)``."""

    _FLOAT_MODULE = _CONV = _Conv1d


class Conv2d(_QATConv, _Conv2d):
    """QAT Conv2d: ``conv2d(x, weight_fake_quant(weight), bias)``."""

    _FLOAT_MODULE = _CONV = _Conv2d


class Conv3d(_QATConv, _Conv3d):
    """QAT Conv3d: ``conv3d(x, weight_fake_quant(weight), bias)``."""

    _FLOAT_MODULE = _CONV = _Conv3d
