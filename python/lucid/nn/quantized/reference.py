"""Reference quantized modules (``lucid.nn.quantized.reference``), as PyTorch's
``torch.ao.nn.quantized.reference``: float in, float out, with the quantization made
explicit instead of run in integers.

``Linear`` / ``Conv1d`` / ``Conv2d`` store the weight quantized (int8 codes and their
per-tensor or per-channel qparams, as the integer modules do) and their forward
dequantizes it (``dequantize``, exact) and runs the float op. ``QuantDeQuant`` is
``dequantize(quantize(x))`` with fixed qparams: ``convert(model, is_reference=True)``
puts one wherever ``prepare`` observed an activation, so the reference model computes
the real model's quantization steps in float (docs/quantization_workflow.md).
"""
from __future__ import annotations

import lucid._namespace as lucid

from ... import _dtype
from ..._creation import zeros
from .. import functional as F
from ..layers.conv import pad_by_mode
from ..module import Module
from ...quantization.primitives import dequantize, quantize
from ...quantization.qtensor import QTensor
from .checks import QuantizedStateMixin
from .conv import Conv1d as _QConv1d
from .conv import Conv2d as _QConv2d
from .linear import Linear as _QLinear
from .quantize_dequantize import Quantize


class QuantDeQuant(Quantize):
    """``dequantize(quantize(x, scale, zero_point, dtype))`` on float tensors (full grid of
    ``dtype``, quint8 by default): the quantization step of a real module, in float.

    >>> import lucid
    >>> from lucid.nn.quantized import reference as nnqr
    >>> nnqr.QuantDeQuant(0.5, 0)(lucid.tensor([0.2, 0.3, 200.0])).tolist()
    [0.0, 0.5, 127.5]
    """

    def forward(self, x):
        if isinstance(x, QTensor):
            raise TypeError("reference QuantDeQuant.forward(): expected a float tensor, got a QTensor")
        s, z = float(self.scale.item()), int(self.zero_point.item())
        return dequantize(quantize(x, s, z, self.dtype), s, z)

    def extra_repr(self):  # the dtype by name, as the reference model prints it
        return f"scale={self.scale.item()}, zero_point={self.zero_point.item()}, dtype={self.dtype.name}"


class _ReferenceWeighted(QuantizedStateMixin, Module):
    """``weight_int8`` (int8), ``weight_scale`` (float32) / ``weight_zero_point`` (int32) per
    output channel (a per-tensor scheme stored replicated, as the integer modules do), and
    the float32 ``bias``."""

    _exact_dtype_state = frozenset({"weight_int8", "weight_zero_point"})
    _scale_state = frozenset({"weight_scale"})

    def _init_buffers(self, weight_shape, bias):
        n = weight_shape[0]
        self.register_buffer("weight_int8", zeros(weight_shape, dtype=_dtype.int8))
        self.register_buffer("weight_scale", lucid.ones(n, dtype=_dtype.float32))
        self.register_buffer("weight_zero_point", zeros(n, dtype=_dtype.int32))
        self.register_buffer("bias", zeros(n, dtype=_dtype.float32) if bias else None)
        self.weight_qscheme = "per_tensor_affine"

    def get_weight(self):
        """The float32 weight the forward uses: ``dequantize`` of the codes (exact)."""
        return dequantize(self.weight_int8, self.weight_scale, self.weight_zero_point, ch_axis=0)

    def _fill(self, qmod):
        self.weight_int8 = qmod.weight_int8.clone()
        self.weight_scale = qmod.weight_scale.clone()
        self.weight_zero_point = qmod.weight_zero_point.clone()
        if qmod.bias_float is not None:
            self.bias = qmod.bias_float.clone()
        self.weight_qscheme = qmod.weight_qscheme
        return self.to(qmod.weight_int8.device)

    def _float_input(self, x):
        if isinstance(x, QTensor) or not isinstance(x, lucid.Tensor) or not x.dtype.is_floating_point:
            raise TypeError(f"reference {type(self).__name__}.forward(): expected a float lucid.Tensor, got "
                            f"{type(x).__name__}")
        return x

    def get_extra_state(self):
        return {"kind": f"reference.{type(self).__name__}", "weight_qscheme": self.weight_qscheme}

    def set_extra_state(self, state) -> None:
        kind = f"reference.{type(self).__name__}"
        if not isinstance(state, dict) or state.get("kind") != kind \
                or state.get("weight_qscheme") not in ("per_tensor_affine", "per_channel_affine"):
            raise RuntimeError(f"{kind}.load_state_dict(): the checkpoint's extra state is {state!r}")
        self.weight_qscheme = state["weight_qscheme"]


class Linear(_ReferenceWeighted):
    """Reference quantized Linear: ``linear(x, dequantize(weight_int8), bias)`` in float.
    Built by ``convert(..., is_reference=True)`` or ``from_quantized(nnq.Linear)``."""

    def __init__(self, in_features, out_features, bias_=True):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self._init_buffers((self.out_features, self.in_features), bias_)

    def forward(self, x):
        return F.linear(self._float_input(x), self.get_weight(), self.bias)

    @classmethod
    def from_quantized(cls, qmod):
        """The reference twin of an integer ``nnq.Linear`` (same codes and qparams)."""
        return cls(qmod.in_features, qmod.out_features, qmod.bias_float is not None)._fill(qmod)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, qscheme={self.weight_qscheme}"


class _ReferenceConv(_ReferenceWeighted):
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias_=True,
                 padding_mode="zeros"):
        super().__init__()
        self.in_channels, self.out_channels, self.groups = int(in_channels), int(out_channels), int(groups)
        self.kernel_size, self.stride, self.dilation = tuple(kernel_size), tuple(stride), tuple(dilation)
        self.padding = padding if isinstance(padding, str) else tuple(padding)
        self.padding_mode = padding_mode
        self._init_buffers((self.out_channels, self.in_channels // self.groups) + self.kernel_size, bias_)

    def forward(self, x):
        x, w = self._float_input(x), self.get_weight()
        x, padding = pad_by_mode(x, self.padding, self.kernel_size, self.dilation, self.padding_mode)
        if self._nd == 2:
            return F.conv2d(x, w, self.bias, self.stride, padding, self.dilation, self.groups)
        padding = padding if isinstance(padding, (str, int)) else padding[0]
        return F.conv1d(x, w, self.bias, self.stride[0], padding, self.dilation[0], self.groups)

    @classmethod
    def from_quantized(cls, qmod):
        """The reference twin of an integer ``nnq.Conv1d`` / ``Conv2d`` (same codes and qparams)."""
        new = cls(qmod.in_channels, qmod.out_channels, qmod.kernel_size, stride=qmod.stride, padding=qmod.padding,
                  dilation=qmod.dilation, groups=qmod.groups, bias_=qmod.bias_float is not None,
                  padding_mode=qmod.padding_mode)
        return new._fill(qmod)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding!r}, dilation={self.dilation}, groups={self.groups}, "
                f"qscheme={self.weight_qscheme}")


class Conv2d(_ReferenceConv):
    """Reference quantized Conv2d: ``conv2d(x, dequantize(weight_int8), bias, ...)`` in float."""


class Conv1d(_ReferenceConv):
    """Reference quantized Conv1d: ``conv1d(x, dequantize(weight_int8), bias, ...)`` in float."""

    _nd = 1


def reference_of(qmod):
    """``(reference module, relu)`` for an integer weighted module (``nnq.Linear`` / ``Conv1d`` /
    ``Conv2d`` or a fused ReLU form), or None when there is no reference version."""
    for qcls, rcls in ((_QLinear, Linear), (_QConv2d, Conv2d), (_QConv1d, Conv1d)):
        if isinstance(qmod, qcls):
            return rcls.from_quantized(qmod), bool(getattr(qmod, "_relu", False))
    return None
