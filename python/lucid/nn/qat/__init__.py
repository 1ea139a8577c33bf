"""Quantization-aware training layers (``lucid.nn.qat``), as PyTorch's ``torch.ao.nn.qat``:
the float layer with its weight passed through ``weight_fake_quant`` (built from the
``qconfig`` the layer must be given; ``ValueError`` naming ``qconfig`` otherwise). The
output's fake quantization is the ``activation_post_process`` that ``prepare_qat`` adds.

>>> import lucid
>>> import lucid.quantization as Q
>>> m = lucid.nn.qat.Linear(4, 2, qconfig=Q.default_qat_qconfig)
>>> m(lucid.ones(1, 4)).shape
(1, 2)
"""
from __future__ import annotations

from .. import functional as F
from ..layers import Conv1d as _Conv1d
from ..layers import Conv2d as _Conv2d
from ..layers import Embedding as _Embedding
from ..layers import Linear as _Linear

__all__ = ["Linear", "Conv1d", "Conv2d", "Embedding"]


def _need_qconfig(owner, qconfig):
    if qconfig is None:
        raise ValueError(f"{owner}: qconfig must be provided for a QAT module (pass qconfig=..., or set the float "
                         "module's .qconfig before prepare_qat / from_float)")


def _init_qat(self, qconfig):
    _need_qconfig(type(self).__name__, qconfig)
    self.qconfig = qconfig
    # on the weight's device, as PyTorch passes the module's device to the factory
    self.weight_fake_quant = qconfig.weight().to(self.weight.device)


def _copy_params(new, mod):
    new.weight = mod.weight
    if getattr(mod, "bias", None) is not None:
        new.bias = mod.bias
    new.to(mod.weight.device)
    new.train(mod.training)
    return new


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
        new = cls(mod.in_features, mod.out_features, mod.bias is not None, qconfig=mod.qconfig)
        return _copy_params(new, mod)

    def to_float(self):
        new = _Linear(self.in_features, self.out_features, self.bias is not None)
        return _copy_params(new, self)


class _QATConv:
    _FLOAT_MODULE = None

    def _qat_init(self, qconfig):
        _init_qat(self, qconfig)

    @classmethod
    def from_float(cls, mod, module_name=""):
        _need_qconfig(f"{cls.__name__}.from_float() of '{module_name or type(mod).__name__}'",
                      getattr(mod, "qconfig", None))
        new = cls(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding, mod.dilation,
                  mod.groups, mod.bias is not None, mod.padding_mode, qconfig=mod.qconfig)
        return _copy_params(new, mod)

    def to_float(self):
        new = self._FLOAT_MODULE(self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding,
                                 self.dilation, self.groups, self.bias is not None, self.padding_mode)
        return _copy_params(new, self)


class Conv2d(_QATConv, _Conv2d):
    """QAT Conv2d: ``conv2d(x, weight_fake_quant(weight), bias)``."""

    _FLOAT_MODULE = _Conv2d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", qconfig=None, device=None, dtype=None):
        _Conv2d.__init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)
        self._qat_init(qconfig)

    def forward(self, input):
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)


class Conv1d(_QATConv, _Conv1d):
    """QAT Conv1d: ``conv1d(x, weight_fake_quant(weight), bias)``."""

    _FLOAT_MODULE = _Conv1d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", qconfig=None, device=None, dtype=None):
        _Conv1d.__init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)
        self._qat_init(qconfig)

    def forward(self, input):
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)


class Embedding(_Embedding):
    """QAT Embedding: lookups in ``weight_fake_quant(weight)`` (per-row weights, as PyTorch's
    QAT embedding uses; the qconfig's activation must be a no-op)."""

    _FLOAT_MODULE = _Embedding

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, qconfig=None, device=None, dtype=None):
        super().__init__(num_embeddings, embedding_dim, padding_idx, device, dtype)
        _init_qat(self, qconfig)

    def forward(self, input):
        return F.embedding(input, self.weight_fake_quant(self.weight), self.padding_idx)

    @classmethod
    def from_float(cls, mod, module_name=""):
        _need_qconfig(f"{cls.__name__}.from_float() of '{module_name or type(mod).__name__}'",
                      getattr(mod, "qconfig", None))
        new = cls(mod.num_embeddings, mod.embedding_dim, mod.padding_idx, qconfig=mod.qconfig)
        new.weight = mod.weight
        return new.to(mod.weight.device)
