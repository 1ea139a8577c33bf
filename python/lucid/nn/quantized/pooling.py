"""Quantized pooling: max pooling of the codes (exact, max commutes with the monotone
dequantization) and adaptive average pooling of the codes; both keep the qparams.

Loading this module registers ``max_pool2d`` and ``adaptive_avg_pool2d`` of a QTensor
for the float ops (``lucid._ops.common.register_quantized``).
"""
from __future__ import annotations

import lucid._namespace as lucid

from ... import _dtype
from ..._ops.common import register_quantized
from ...quantization.primitives import qmax_pool2d
from ...quantization.qtensor import QTensor
from .. import functional as F
from ..module import Module


def _max_pool2d_codes(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Max pooling of a QTensor's codes (``nn.functional.max_pool2d``'s arguments), same qparams."""
    return x._same_params(qmax_pool2d(x.int_repr(), kernel_size, stride, padding, dilation, ceil_mode))


def _adaptive_avg_pool2d_codes(x, output_size):
    """Adaptive average pooling of a QTensor's codes: ``rint(fl(sum / n))`` per bin, same qparams."""
    c = x.int_repr()
    if c.ndim not in (3, 4):
        raise ValueError(f"AdaptiveAvgPool2d.forward(): expected a 3-D or 4-D input, got shape {tuple(c.shape)}")
    h, w = c.shape[-2], c.shape[-1]
    os_ = output_size
    oh, ow = (os_, os_) if isinstance(os_, int) else os_
    oh, ow = oh or h, ow or w
    cf = c.to(_dtype.float32)
    rows = []
    for i in range(oh):
        h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        cols = []
        for j in range(ow):
            w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            s = cf[..., h0:h1, w0:w1].sum(dim=(-2, -1))
            cols.append(lucid.round(s / float((h1 - h0) * (w1 - w0))))
        rows.append(lucid.stack(cols, dim=-1))
    out = lucid.stack(rows, dim=-2)
    return x._same_params(out.to(c.dtype))


register_quantized("max_pool2d", _max_pool2d_codes)
register_quantized("adaptive_avg_pool2d", _adaptive_avg_pool2d_codes)


class MaxPool2d(Module):
    """Max pooling of the codes (exact: max commutes with the monotone dequantization);
    the qparams are kept. Arguments as ``nn.MaxPool2d``."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.ceil_mode = dilation, ceil_mode

    def forward(self, x):
        def pool(t):
            return F.max_pool2d(t, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)

        if not isinstance(x, QTensor):
            return pool(x)
        return _max_pool2d_codes(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls(mod.kernel_size, stride=mod.stride, padding=mod.padding, dilation=mod.dilation, ceil_mode=mod.ceil_mode)


class AdaptiveAvgPool2d(Module):
    """Mean of the codes over PyTorch's adaptive bins, ``rint(fl(Σ codes / n))`` (ties to
    even; the sums are exact integers in float32); the qparams are kept."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        if not isinstance(x, QTensor):
            return F.adaptive_avg_pool2d(x, self.output_size)
        return _adaptive_avg_pool2d_codes(x, self.output_size)

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls(mod.output_size)
