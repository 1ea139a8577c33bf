"""The quantized activations: ReLU and ReLU6 clamp the codes; the lookup-table
activations (Hardswish, Hardsigmoid, Sigmoid, Tanh, LeakyReLU, ELU) map each of the 256
input codes once: the table is ``quantize(f(dequantize(c)))`` with ``f`` evaluated by
lucid's own float op on the CPU stream, then applied to the codes by indexing. Both
streams use the same table, so their codes are identical, and for the piecewise-linear
functions (correctly rounded elementwise ops) the table equals the fake-quantized float
forward exactly.

Loading this module registers ``relu`` of a QTensor for the float op
(``lucid._ops.common.register_quantized``).
"""
from __future__ import annotations

import numpy as np

import lucid._namespace as lucid

from ... import _dtype
from ..._ops.common import register_quantized
from ...quantization.primitives import dequantize, fake_quantize, quantize
from ...quantization.qdtype import as_qdtype
from ...quantization.qtensor import QTensor
from .. import functional as F
from ..module import Module
from .checks import QuantizedStateMixin, as_qtensor
from .observed_qparams import observer_qparams, requant_param_buffers


def _relu_codes(x):
    """ReLU of a QTensor: ``max(code, zero_point)`` (real 0 is the zero-point code), same qparams."""
    c = x.int_repr()
    return x._same_params(lucid.maximum(c, lucid.full((), x.q_zero_point(), dtype=c.dtype, device=c.device)))


register_quantized("relu", _relu_codes)


class ReLU(Module):
    """``max(code, zero_point)`` (real 0 is the zero-point code); the qparams are kept.
    A float input gets the float ReLU."""

    def __init__(self, inplace=False):
        super().__init__()

    def forward(self, x):
        if not isinstance(x, QTensor):
            return F.relu(x)
        return _relu_codes(x)

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls()


def _code_of(value: float, scale: float, zp: int, qd) -> int:
    """The quantize formula on the host, float32 (docs/numerics.md)."""
    r = np.rint(np.float32(value) / np.float32(scale))
    return int(np.clip(np.float32(r) + np.float32(zp), qd.quant_min, qd.quant_max))


class ReLU6(Module):
    """``clamp(code, zero_point, code of 6.0)``; the qparams are kept."""

    def __init__(self, inplace=False):
        super().__init__()
        # (scale, zero point, grid) -> the code of 6.0: a model feeds each ReLU6 one grid,
        # and the host quantize formula costs more than the clamp of a small tensor
        self._six = {}

    def forward(self, x):
        if not isinstance(x, QTensor):
            return F.relu6(x)
        scale, zp = x.q_scale(), x.q_zero_point()
        key = (scale, zp, x.dtype)
        hi = self._six.get(key)
        if hi is None:
            if len(self._six) > 64:
                self._six.clear()
            hi = self._six[key] = _code_of(6.0, scale, zp, x.dtype)
        return x._same_params(lucid.clamp(x.int_repr(), zp, hi))

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls()


class _LookupActivation(QuantizedStateMixin, Module):
    """Output codes ``table[input code]``; the table is built per input qparams and cached."""

    _exact_dtype_state = frozenset({"zero_point"})
    _scale_state = frozenset({"scale"})
    _fixed = None  # (scale, zero_point) of fixed-range outputs

    qdtype = property(lambda self: self.dtype, doc="Upstream lucid's name for ``dtype``.")

    def __init__(self, scale=None, zero_point=None, dtype=None, qdtype=None):
        dtype = qdtype if qdtype is not None else dtype  # qdtype: upstream lucid's name
        super().__init__()
        if scale is None:
            scale, zero_point = self._fixed
        requant_param_buffers(self, scale, zero_point)
        self.dtype = as_qdtype(dtype or "quint8")
        self._tables = {}

    def _float_fn(self, x):
        raise NotImplementedError

    def _table(self, x):
        key = (x.q_scale(), x.q_zero_point(), x.dtype.name, self.scale.item(), int(self.zero_point.item()),
               self.dtype.name, x.device.type)
        t = self._tables.get(key)
        if t is None:
            qd = x.dtype
            codes = lucid.tensor(np.arange(qd.quant_min, qd.quant_max + 1), dtype=qd.storage)
            real = dequantize(codes, x.q_scale(), x.q_zero_point())
            out = quantize(self._float_fn(real), self.scale.item(), int(self.zero_point.item()), self.dtype)
            t = self._tables[key] = out.to(x.device)
        return t

    def forward(self, x):
        if not isinstance(x, QTensor):
            # a float input: the float function, its output rounded onto this module's grid
            qd = self.dtype
            return fake_quantize(self._float_fn(x), self.scale.item(), int(self.zero_point.item()), qd.quant_min,
                                 qd.quant_max)
        x = as_qtensor(x, type(self).__name__)
        c = x.int_repr()
        idx = c.reshape(-1).to(_dtype.int64)
        if x.dtype.signed:
            idx = idx - x.dtype.quant_min
        out = lucid.index_select(self._table(x), 0, idx).reshape(c.shape)
        return QTensor(out, self.scale.item(), int(self.zero_point.item()), self.dtype)

    @classmethod
    def from_float(cls, mod, module_name=""):
        if cls._fixed is not None and getattr(mod, "activation_post_process", None) is None:
            new = cls()
        else:
            s, z, qd = observer_qparams(mod.activation_post_process, module_name or type(mod).__name__)
            new = cls(scale=s, zero_point=z, dtype=qd)
        for attr in ("negative_slope", "alpha"):
            if hasattr(mod, attr):
                setattr(new, attr, getattr(mod, attr))
        return new

    def extra_repr(self):
        return f"scale={self.scale.item()}, zero_point={self.zero_point.item()}"


class Hardswish(_LookupActivation):
    def _float_fn(self, x):
        return F.hardswish(x)


class Hardsigmoid(_LookupActivation):
    _fixed = (1.0 / 256.0, 0)

    def _float_fn(self, x):
        return F.hardsigmoid(x)


class Sigmoid(_LookupActivation):
    _fixed = (1.0 / 256.0, 0)

    def _float_fn(self, x):
        return F.sigmoid(x)


class Tanh(_LookupActivation):
    _fixed = (2.0 / 256.0, 128)

    def _float_fn(self, x):
        return F.tanh(x)


class LeakyReLU(_LookupActivation):
    def __init__(self, scale=None, zero_point=None, negative_slope=0.01, dtype=None, qdtype=None):
        super().__init__(scale, zero_point, dtype, qdtype)
        self.negative_slope = negative_slope

    def _float_fn(self, x):
        return F.leaky_relu(x, self.negative_slope)


class ELU(_LookupActivation):
    def __init__(self, scale=None, zero_point=None, alpha=1.0, dtype=None, qdtype=None):
        super().__init__(scale, zero_point, dtype, qdtype)
        self.alpha = alpha

    def _float_fn(self, x):
        return lucid.where(x > 0, x, (lucid.exp(x) - 1.0) * self.alpha)
