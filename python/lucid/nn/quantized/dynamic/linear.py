"""Dynamically quantized layers (``lucid.nn.quantized.dynamic``): float in, float out.

``Linear``: int8 weights; each call quantizes its input to quint8 with qparams from the
batch's own min / max (PyTorch's dynamic scheme, ``reduce_range=True`` as fbgemm's
kernel uses) and runs ``Q.qmatmul``'s float output ``acc * (x_scale * w_scale)``; the bias
is added in float after the product, as PyTorch does. (Folded into the int32 accumulator it
would saturate when the batch's range is tiny: an all-zero batch gets ``x_scale = 2^-23``.)

``WeightOnlyInt4Linear``: qint4 weights packed two per byte, one symmetric scale per
``group_size`` input features; activations stay float. The forward unpacks and
dequantizes the weight (exact, elementwise) and runs the float product.
"""
from __future__ import annotations

import numpy as np

import lucid._namespace as lucid

from .... import _dtype
from ...._creation import zeros
from ... import functional as F
from ...layers import Linear as _FloatLinear
from ...module import Module
from ....quantization.observer import default_weight_observer
from ....quantization.primitives import dequantize, int4_weight_only_linear, pack_int4, qmatmul, quantize, unpack_int4
from ....quantization.qconfig import weight_int4_qconfig
from ....quantization.qdtype import per_tensor_affine, qint4, qint8, quint8
from ....quantization.qparams import calculate_qparams
from ....quantization.qtensor import QTensor
from ..checks import QuantizedStateMixin
from ..observed_qparams import quantize_weight
from ..weighted_base import _float_parts, _PackCache


class Linear(QuantizedStateMixin, Module):
    """Dynamic int8 Linear (see the module docstring).

    >>> import lucid
    >>> from lucid.nn.quantized import dynamic as nnqd
    >>> m = nnqd.Linear.from_float(lucid.nn.Linear(4, 2))
    >>> m(lucid.ones(3, 4)).shape
    (3, 2)
    """

    _FLOAT_MODULE = _FloatLinear
    _exact_dtype_state = frozenset({"weight_int8", "weight_zero_point"})
    _scale_state = frozenset({"weight_scale"})

    def __init__(self, in_features, out_features, bias_=True, dtype=None, reduce_range=True):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.reduce_range = bool(reduce_range)
        self.register_buffer("weight_int8", zeros((self.out_features, self.in_features), dtype=_dtype.int8))
        self.register_buffer("weight_scale", lucid.ones(self.out_features, dtype=_dtype.float32))
        self.register_buffer("weight_zero_point", zeros(self.out_features, dtype=_dtype.int32))
        self.register_buffer("bias_float", zeros(self.out_features, dtype=_dtype.float32) if bias_ else None)
        self._pack_cache = _PackCache()  # the GEMM panels of weight_int8, packed once (CPU stream)

    def weight(self):
        return QTensor(self.weight_int8, self.weight_scale, self.weight_zero_point, qint8, axis=0)

    def bias(self):
        return self.bias_float

    def _input_qparams(self, x):
        mn = float(lucid.amin(x).item()) if x.numel() else 0.0
        mx = float(lucid.amax(x).item()) if x.numel() else 0.0
        if not (np.isfinite(mn) and np.isfinite(mx)):
            raise ValueError("dynamic Linear.forward(): the input holds NaN or infinite values")
        with np.errstate(over="ignore"):
            width = np.float32(max(mx, 0.0)) - np.float32(min(mn, 0.0))
        if not np.isfinite(width):
            # the activation scale (max - min) / 255 is computed in float32 (docs/numerics.md)
            raise ValueError(f"dynamic Linear.forward(): argument 'input' spans [{mn:g}, {mx:g}]; its range "
                             "max(max, 0) - min(min, 0) overflows float32, so no quint8 activation scale exists. "
                             "Scale the input into a narrower range")
        p = calculate_qparams(mn, mx, quint8, per_tensor_affine, reduce_range=self.reduce_range)
        return float(p.scale.item()), int(p.zero_point.item())

    def forward(self, x):
        if not isinstance(x, lucid.Tensor) or not x.dtype.is_floating_point:
            raise TypeError(f"dynamic Linear.forward(): expected a float lucid.Tensor, got "
                            f"{getattr(x, 'dtype', type(x).__name__)!r}")
        s, z = self._input_qparams(x)
        xq = quantize(x, s, z, quint8)
        y = qmatmul(xq, s, z, self._pack_cache.get(self.weight_int8), self.weight_scale, self.weight_zero_point)
        return y if self.bias_float is None else y + self.bias_float

    @classmethod
    def from_float(cls, mod, module_name="", weight_observer=None):
        layer, _ = _float_parts(mod)
        if layer.in_features * 255 * 255 >= 2**31:
            raise ValueError(f"dynamic Linear.from_float(): '{module_name or 'Linear'}' has in_features = "
                             f"{layer.in_features}, too many for exact int32 accumulation (at most 33025)")
        if weight_observer is None:
            qconfig = getattr(mod, "qconfig", None)
            weight_observer = (qconfig.weight() if qconfig is not None and qconfig.weight is not None
                               else default_weight_observer())
            weight_observer.to(layer.weight.device)
            weight_observer(layer.weight.detach())
        new = cls(layer.in_features, layer.out_features, layer.bias is not None)
        codes, ws, wz, _ = quantize_weight(layer.weight, weight_observer, module_name or "Linear")
        new.weight_int8, new.weight_scale, new.weight_zero_point = codes, ws, wz
        if layer.bias is not None:
            new.bias_float = layer.bias.detach().to(_dtype.float32).clone()
        return new.to(layer.weight.device)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, dtype=qint8"


class Float16Linear(Module):
    """Dynamic float16 Linear (``quantize_dynamic(dtype=float16)``): the weight is stored
    rounded to float16; activations are float32 and the product runs on the float32
    widening of the stored weight."""

    def __init__(self, in_features, out_features, bias_=True):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.register_buffer("weight_fp16", zeros((self.out_features, self.in_features), dtype=_dtype.float16))
        self.register_buffer("bias_float", zeros(self.out_features, dtype=_dtype.float32) if bias_ else None)

    def forward(self, x):
        return F.linear(x, self.weight_fp16.to(_dtype.float32), self.bias_float)

    @classmethod
    def from_float(cls, mod, module_name=""):
        new = cls(mod.in_features, mod.out_features, mod.bias is not None)
        new.weight_fp16 = mod.weight.detach().to(_dtype.float16)
        if mod.bias is not None:
            new.bias_float = mod.bias.detach().to(_dtype.float32).clone()
        return new.to(mod.weight.device)


class WeightOnlyInt4Linear(QuantizedStateMixin, Module):
    """int4 weight-only Linear: ``weight_packed`` (uint8, two qint4 codes per byte along
    the input features), ``weight_scale`` (float32, (out_features, in_features / group_size))
    and ``group_size`` (32, 64 or 128). Build it with ``from_float(linear, group_size=64)``.
    ``act_dtype="qint8"`` quantizes each input row dynamically to int8 and takes exact
    integer group dots (``Q.int4_weight_only_linear``'s ``act_dtype``; faster on the CPU
    stream, the same bits on both streams); ``None`` keeps float activations. Inputs
    that need a gradient (or are not float32) take the dequantized float path either way.

    >>> import lucid
    >>> from lucid.nn.quantized import dynamic as nnqd
    >>> m = nnqd.WeightOnlyInt4Linear.from_float(lucid.nn.Linear(64, 3), group_size=32)
    >>> m.weight_packed.shape, m.weight_scale.shape
    ((3, 32), (3, 2))
    """

    _exact_dtype_state = frozenset({"weight_packed"})
    _scale_state = frozenset({"weight_scale"})

    def __init__(self, in_features, out_features, bias_=True, group_size=64, act_dtype=None):
        super().__init__()
        if isinstance(group_size, bool) or group_size not in (32, 64, 128):
            raise ValueError(f"WeightOnlyInt4Linear(): group_size must be 32, 64 or 128, got {group_size!r}")
        act = None if act_dtype is None else getattr(act_dtype, "name", act_dtype)
        if act not in (None, "qint8"):
            raise ValueError(f"WeightOnlyInt4Linear(): act_dtype must be None (float activations) or 'qint8', "
                             f"got {act_dtype!r}")
        self.act_dtype = act
        if in_features % group_size:
            raise ValueError(f"WeightOnlyInt4Linear(): in_features ({in_features}) must be a multiple of "
                             f"group_size ({group_size})")
        self.in_features, self.out_features, self.group_size = int(in_features), int(out_features), int(group_size)
        self.register_buffer("weight_packed", zeros((self.out_features, (self.in_features + 1) // 2),
                                                    dtype=_dtype.uint8))
        self.register_buffer("weight_scale", lucid.ones((self.out_features, self.in_features // self.group_size),
                                                        dtype=_dtype.float32))
        self.register_buffer("bias_float", zeros(self.out_features, dtype=_dtype.float32) if bias_ else None)

    def dequantized_weight(self):
        """The float32 weight the forward uses: ``code * scale`` per group."""
        codes = unpack_int4(self.weight_packed, self.in_features, signed=True)
        return dequantize(codes, self.weight_scale, 0, group_size=self.group_size, axis=-1)

    def forward(self, x):
        # The int4 kernel keeps the weights packed (memory-bound decoding); it records
        # no gradient, so an input that needs one takes the dequantized float path.
        if x.dtype == _dtype.float32 and not x.requires_grad:
            return int4_weight_only_linear(x, self.weight_packed, self.weight_scale, group_size=self.group_size,
                                               bias=self.bias_float, act_dtype=self.act_dtype)
        return F.linear(x, self.dequantized_weight(), self.bias_float)

    @classmethod
    def from_float(cls, mod, group_size=64, module_name="", act_dtype=None):
        layer = mod
        new = cls(layer.in_features, layer.out_features, layer.bias is not None, group_size=group_size, act_dtype=act_dtype)
        obs = weight_int4_qconfig(group_size).weight()
        obs.to(layer.weight.device)
        obs(layer.weight.detach())
        s, z = obs.calculate_qparams()
        codes = quantize(layer.weight.detach(), s, z, qint4, group_size=group_size, axis=-1)
        new.weight_packed = pack_int4(codes)
        new.weight_scale = s.to(_dtype.float32)
        if layer.bias is not None:
            new.bias_float = layer.bias.detach().to(_dtype.float32).clone()
        return new.to(layer.weight.device)

    def extra_repr(self):
        act = "" if self.act_dtype is None else f", act_dtype={self.act_dtype}"
        return f"in_features={self.in_features}, out_features={self.out_features}, group_size={self.group_size}{act}"
