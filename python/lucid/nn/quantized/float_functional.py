"""``FloatFunctional`` (float ops a model calls through a module, so that ``prepare`` can
observe their outputs) and ``QFunctional``, its quantized replacement.

QFunctional's add / add_relu / mul / cat compute ``quantize(op(dequantize(a),
dequantize(b)))`` with the output ``scale`` / ``zero_point``: each step is one correctly
rounded float32 elementwise operation (no accumulation), so the codes are identical on
both streams and equal to the fake-quantized float forward bit for bit. Inputs of one
shape and 8-bit code dtype (per-tensor integer grids) take one fused pass of those same
operations (``lucid.quantization.qelementwise``); others (broadcasting, mixed code dtypes,
float grids) run the composite of dequantize, the float op and quantize. ``add_scalar``
requantizes with the input's qparams; ``mul_scalar`` rescales without touching the codes
(negative scalars mirror them), as PyTorch's kernels do; neither is observed.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

import lucid._namespace as lucid

from ..layers import Identity
from ..module import Module
from .. import functional as F
from ...quantization.qdtype import as_qdtype
from ...quantization.qelementwise import qadd, qcat, qmul
from ...quantization.qtensor import QTensor, quantize_per_tensor
from .checks import QuantizedStateMixin, as_qtensor
from .observed_qparams import observer_qparams, requant_param_buffers


class FloatFunctional(Module):
    """``add``, ``add_relu``, ``mul``, ``cat``, ``add_scalar``, ``mul_scalar`` on float tensors;
    each (but the scalar forms) passes its result through ``activation_post_process``
    (an Identity until ``prepare`` puts an observer there)."""

    def __init__(self):
        super().__init__()
        self.activation_post_process = Identity()

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not meant to be called; use its add / mul / cat methods")

    def add(self, x, y):
        return self.activation_post_process(x + y)

    def add_relu(self, x, y):
        return self.activation_post_process(F.relu(x + y))

    def mul(self, x, y):
        return self.activation_post_process(x * y)

    def cat(self, xs, dim=0):
        return self.activation_post_process(lucid.cat(list(xs), dim=dim))

    def add_scalar(self, x, c):
        return x + c

    def mul_scalar(self, x, c):
        return x * c


_CODES = ("uint8", "int8")  # the code dtypes the fused kernels take


def _fusable(q) -> bool:
    """A per-tensor QTensor of an integer grid stored in 8 bits."""
    return not q._qdtype.is_floating and q._qdtype.storage in _CODES


def _scalar(fn, c) -> float:
    """``c`` as a finite float; TypeError / ValueError naming the argument otherwise."""
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Real):
        raise TypeError(f"{fn}(): argument 'c' must be a real number, got {type(c).__name__}")
    if not math.isfinite(float(c)):
        raise ValueError(f"{fn}(): argument 'c' must be finite, got {c!r}")
    return float(c)


class QFunctional(QuantizedStateMixin, Module):
    """The quantized ``FloatFunctional``: QTensors in, QTensors (``scale`` / ``zero_point``,
    grid ``dtype``) out."""

    _exact_dtype_state = frozenset({"zero_point"})
    _scale_state = frozenset({"scale"})

    qdtype = property(lambda self: self.dtype, doc="Upstream lucid's name for ``dtype``.")

    def __init__(self, scale=1.0, zero_point=0, dtype=None, qdtype=None):
        dtype = qdtype if qdtype is not None else dtype  # qdtype: upstream lucid's name
        super().__init__()
        requant_param_buffers(self, scale, zero_point)
        self.dtype = as_qdtype(dtype or "quint8")

    def forward(self, x):
        raise RuntimeError("QFunctional is not meant to be called; use its add / mul / cat methods")

    def _requant(self, real):
        return quantize_per_tensor(real, self.scale.item(), int(self.zero_point.item()), self.dtype)

    def _two(self, x, y, name):
        return as_qtensor(x, f"QFunctional.{name}"), as_qtensor(y, f"QFunctional.{name}")

    def _out_params(self):
        """(scale as float32, zero point) of the output grid, or None when the grid is not
        one the fused kernels write."""
        qd = self.dtype
        if qd.is_floating or qd.storage not in _CODES:
            return None
        bufs = self._buffers  # an instance attribute: no Module.__getattr__ per buffer
        return float(np.float32(bufs["scale"].item())), int(bufs["zero_point"].item())

    def _pair_params(self, a, b):
        """The output's (scale, zero point) when a, b take the fused kernel, else None."""
        ca, cb = a._codes, b._codes
        if not (_fusable(a) and _fusable(b) and a._qdtype.storage == b._qdtype.storage and ca.shape == cb.shape
                and ca.device == cb.device):
            return None
        return self._out_params()

    def _binary(self, x, y, name, relu=False):
        a, b = self._two(x, y, name)
        out = self._pair_params(a, b)
        if out is None:  # broadcasting, mixed code dtypes, float grids: the composite
            real = a.dequantize() + b.dequantize() if name != "mul" else a.dequantize() * b.dequantize()
            return self._requant(F.relu(real) if relu else real)
        s, z = out
        if name == "mul":
            codes = qmul(a._codes, a._scale, a._zero_point, b._codes, b._scale, b._zero_point, s, z, self.dtype.name)
        else:
            codes = qadd(a._codes, a._scale, a._zero_point, b._codes, b._scale, b._zero_point, s, z, self.dtype.name,
                         relu=relu)
        return QTensor._checked(codes, s, z, self.dtype)

    def add(self, x, y):
        return self._binary(x, y, "add")

    def add_relu(self, x, y):
        return self._binary(x, y, "add_relu", relu=True)

    def mul(self, x, y):
        return self._binary(x, y, "mul")

    def cat(self, xs, dim=0):
        qs = [as_qtensor(x, "QFunctional.cat") for x in xs]
        out = self._out_params() if qs and all(_fusable(q) for q in qs) else None
        if out is not None and isinstance(dim, int) and not isinstance(dim, bool):
            c0 = qs[0]._codes
            if all(q._qdtype.storage == qs[0]._qdtype.storage and q._codes.device == c0.device for q in qs):
                s, z = out
                codes = qcat([q._codes for q in qs], [q._scale for q in qs], [q._zero_point for q in qs], dim, s, z,
                             self.dtype.name)
                return QTensor._checked(codes, s, z, self.dtype)
        return self._requant(lucid.cat([q.dequantize() for q in qs], dim=dim))

    def add_scalar(self, x, c):
        x = as_qtensor(x, "QFunctional.add_scalar")
        c = _scalar("QFunctional.add_scalar", c)
        return quantize_per_tensor(x.dequantize() + c, x.q_scale(), x.q_zero_point(), x.dtype)

    def mul_scalar(self, x, c):
        x = as_qtensor(x, "QFunctional.mul_scalar")
        c = _scalar("QFunctional.mul_scalar", c)
        qd = x.dtype
        if c == 0.0:
            codes = lucid.full(tuple(x.shape), x.q_zero_point(), dtype=qd.storage, device=x.device)
            return QTensor(codes, x.q_scale(), x.q_zero_point(), qd)
        s = float(np.float32(x.q_scale()) * np.float32(abs(c)))
        if c > 0:
            return QTensor(x.int_repr(), s, x.q_zero_point(), qd)
        mirror = qd.quant_min + qd.quant_max  # code q -> mirror - q keeps the grid and negates the real value
        codes = (lucid.full((), mirror, dtype="int32", device=x.device) - x.int_repr().to(dtype=lucid.int32)).to(dtype=qd.storage)
        return QTensor(codes, s, mirror - x.q_zero_point(), qd)

    @classmethod
    def from_float(cls, mod, module_name=""):
        s, z, qd = observer_qparams(mod.activation_post_process, module_name or "FloatFunctional")
        return cls(scale=s, zero_point=z, dtype=qd)

    def extra_repr(self):
        return f"scale={self.scale.item()}, zero_point={self.zero_point.item()}"
