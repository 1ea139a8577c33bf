"""QAT conv + BatchNorm layers (``ConvBn{1,2,3}d`` / ``ConvBnReLU{1,2,3}d``) and ``freeze_bn_stats`` / ``update_bn_stats``.

``ConvBn2d`` / ``ConvBnReLU2d`` (and 1d) keep the BatchNorm unfolded during training so
its statistics keep updating: the weight is scaled by ``gamma / sqrt(running_var + eps)``
before its fake quantization, the convolution's output is scaled back and the BatchNorm
runs on the batch (PyTorch's approach). In eval mode, or once ``freeze_bn_stats()`` has
been called, the forward is the folded layer itself — ``conv(x, fq(w'), b')`` with
``(w', b')`` folded exactly as ``fuse_modules`` folds them — so ``convert`` reproduces it.
"""
from __future__ import annotations

import lucid._namespace as lucid

from ... import functional as F
from ...layers import BatchNorm1d, BatchNorm2d, BatchNorm3d, Conv1d, Conv2d, Conv3d, ReLU
from ...module import Module
from ...qat.conv import Conv1d as _QATConv1d
from ...qat.conv import Conv2d as _QATConv2d
from ...qat.conv import Conv3d as _QATConv3d
from ...qat.qat_setup import _need_qconfig
from ..bn_folding import fuse_conv_bn_weights, rsqrt_var
from ..fused_containers import ConvBn1d as _FConvBn1d
from ..fused_containers import ConvBn2d as _FConvBn2d
from ..fused_containers import ConvBn3d as _FConvBn3d
from ..fused_containers import ConvBnReLU1d as _FConvBnReLU1d
from ..fused_containers import ConvBnReLU2d as _FConvBnReLU2d
from ..fused_containers import ConvBnReLU3d as _FConvBnReLU3d

__all__ = ["ConvBn1d", "ConvBn2d", "ConvBn3d", "ConvBnReLU1d", "ConvBnReLU2d", "ConvBnReLU3d", "update_bn_stats", "freeze_bn_stats"]


def _output_fake_quant(module, inputs, output):
    return module.activation_post_process(output)


class _ConvBnNd:
    _relu = False
    _bn_cls = BatchNorm2d

    def _bn_init(self, bn):
        self.bn = bn
        self.freeze_bn = False

    def _init_from(self, qat_conv_cls, float_conv_cls, args, kwargs):
        """PyTorch's ``(in_channels, out_channels, kernel_size, ...)`` form, or upstream
        lucid's ``(conv, bn, [relu=True,] qconfig=...)`` built from the float modules."""
        if not (args and isinstance(args[0], float_conv_cls)):
            qat_conv_cls.__init__(self, *args, **kwargs)
            self._bn_init(self._bn_cls(self.out_channels))
            return
        conv, bn = args[0], (args[1] if len(args) > 1 else kwargs.pop("bn"))
        relu = kwargs.pop("relu", self._relu)
        qat_conv_cls.__init__(self, conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride,
                              padding=conv.padding, dilation=conv.dilation, groups=conv.groups,
                              bias=conv.bias is not None, padding_mode=conv.padding_mode, **kwargs)
        self.weight = conv.weight
        if conv.bias is not None:
            self.bias = conv.bias
        self._bn_init(bn)
        self._relu = bool(relu)
        # built from modules the layer is complete, as upstream lucid builds it: the output
        # fake-quant is attached here (prepare_qat attaches it in PyTorch's form)
        self.activation_post_process = self.qconfig.activation()
        self.register_forward_hook(_output_fake_quant)
        self.to(conv.weight.device)

    @property
    def conv(self):
        """The convolution (this module itself: the conv's weight and bias live here)."""
        return self

    @property
    def relu(self):
        """A ReLU when the output is rectified, else None (upstream lucid's attribute)."""
        return ReLU() if self._relu else None

    def _channel_shape(self, ndim):
        return (1, -1) + (1,) * (ndim - 2)

    def folded_weight_bias(self):
        """``(w', b')``: the BatchNorm's running statistics folded into the conv (fuse_modules' formula)."""
        bn = self.bn
        return fuse_conv_bn_weights(self.weight, self.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
                                    bn.bias)

    # upstream lucid's name for the same fold (its programs and tests call it)
    _fold = folded_weight_bias

    def forward(self, input):
        bn = self.bn
        if not self.training or self.freeze_bn:
            r = rsqrt_var(bn.running_var, bn.eps)
            g = bn.weight if bn.weight is not None else lucid.ones_like(r)
            beta = bn.bias if bn.bias is not None else lucid.zeros_like(r)
            b = self.bias if self.bias is not None else lucid.zeros_like(r)
            k = g * r
            w = self.weight * k.reshape((-1,) + (1,) * (self.weight.ndim - 1))
            bias = (b - bn.running_mean) * r * g + beta
            y = self._conv_forward(input, self.weight_fake_quant(w), bias)
        else:
            # training: scale the weight by the running std, undo it after the conv, let BN see the batch
            r = rsqrt_var(bn.running_var, bn.eps)
            g = bn.weight if bn.weight is not None else lucid.ones_like(r)
            k = g * r
            w = self.weight * k.reshape((-1,) + (1,) * (self.weight.ndim - 1))
            y = self._conv_forward(input, self.weight_fake_quant(w), None)
            y = y / k.reshape(self._channel_shape(y.ndim))
            if self.bias is not None:
                y = y + self.bias.reshape(self._channel_shape(y.ndim))
            y = bn(y)
        return F.relu(y) if self._relu else y

    def freeze_bn_stats(self):
        self.freeze_bn = True
        return self

    def update_bn_stats(self):
        self.freeze_bn = False
        return self

    @classmethod
    def from_float(cls, mod, module_name=""):
        _need_qconfig(f"{cls.__name__}.from_float() of '{module_name or type(mod).__name__}'",
                      getattr(mod, "qconfig", None))
        conv, bn = mod[0], mod[1]
        new = cls(conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride, padding=conv.padding,
                  dilation=conv.dilation, groups=conv.groups, bias=conv.bias is not None,
                  padding_mode=conv.padding_mode, qconfig=mod.qconfig)
        new.weight = conv.weight
        if conv.bias is not None:
            new.bias = conv.bias
        new._bn_init(bn)
        new.to(conv.weight.device)
        new.train(mod.training)
        return new


class ConvBn2d(_ConvBnNd, _QATConv2d):
    """QAT Conv2d + BatchNorm2d (see the module docstring)."""

    _FLOAT_MODULE = _FConvBn2d

    def __init__(self, *args, **kwargs):
        self._init_from(_QATConv2d, Conv2d, args, kwargs)


class ConvBnReLU2d(ConvBn2d):
    """QAT Conv2d + BatchNorm2d + ReLU."""

    _FLOAT_MODULE = _FConvBnReLU2d
    _relu = True


class ConvBn1d(_ConvBnNd, _QATConv1d):
    """QAT Conv1d + BatchNorm1d."""

    _FLOAT_MODULE = _FConvBn1d
    _bn_cls = BatchNorm1d

    def __init__(self, *args, **kwargs):
        self._init_from(_QATConv1d, Conv1d, args, kwargs)


class ConvBnReLU1d(ConvBn1d):
    """QAT Conv1d + BatchNorm1d + ReLU."""

    _FLOAT_MODULE = _FConvBnReLU1d
    _relu = True


class ConvBn3d(_ConvBnNd, _QATConv3d):
    """QAT Conv3d + BatchNorm3d."""

    _FLOAT_MODULE = _FConvBn3d
    _bn_cls = BatchNorm3d

    def __init__(self, *args, **kwargs):
        self._init_from(_QATConv3d, Conv3d, args, kwargs)


class ConvBnReLU3d(ConvBn3d):
    """QAT Conv3d + BatchNorm3d + ReLU."""

    _FLOAT_MODULE = _FConvBnReLU3d
    _relu = True


def freeze_bn_stats(mod: Module):
    """``model.apply(freeze_bn_stats)``: stop BatchNorm statistics updates in fused QAT conv-bn layers."""
    if isinstance(mod, _ConvBnNd):
        mod.freeze_bn_stats()


def update_bn_stats(mod: Module):
    """``model.apply(update_bn_stats)``: resume BatchNorm statistics updates."""
    if isinstance(mod, _ConvBnNd):
        mod.update_bn_stats()
