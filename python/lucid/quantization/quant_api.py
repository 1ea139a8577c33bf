"""torchao's one-call API: ``quantize_(model, config, filter_fn=None)`` swaps, in place,
every ``nn.Linear`` that ``filter_fn(module, fqn)`` accepts for the quantized linear of
``config``; ``FqnToConfig`` picks a config per layer (docs/quantization_llm.md).

Configs and the modules they produce (float input and output throughout):

* ``Int4WeightOnlyConfig(group_size=128)``: torchao's tinygemm int4 grid, asymmetric
  uint4 codes per group with a float zero point (``ZeroPointDomain.FLOAT``, eps 1e-6),
  held in MLX's layout by ``nn.quantized.QuantizedLinearMLX`` (``biases = zero_point -
  8 * scale``); group size 32, 64 or 128.
* ``Int8WeightOnlyConfig(granularity=PerRow())``: symmetric int8 ([-128, 127], scale
  ``amax / 127.5``, eps 2^-23), ``AffineWeightOnlyLinear``.
* ``IntxWeightOnlyConfig(weight_dtype="int8", granularity=PerAxis(0),
  mapping_type=SYMMETRIC)``: 1 to 8 bit codes (``weight_dtype`` ``"int1"`` .. ``"int8"``
  or ``bits=``), per axis or per group, ``AffineWeightOnlyLinear``.
* ``Int8DynamicActivationInt8WeightConfig()``: per-token int8 activations (symmetric by
  default, or ``act_mapping_type=ASYMMETRIC``), per-row symmetric int8 weights, exact
  integer products (``Q.qmatmul``), ``Int8DynamicLinear``.
* ``Int8DynamicActivationInt4WeightConfig(group_size=32)``: per-token asymmetric int8
  activations, symmetric int4 group weights (``Q.int4_weight_only_linear``),
  ``Int8DynActInt4WeightLinear``.
* ``Float8WeightOnlyConfig`` (per-row or per-tensor float8 weights, float activations)
  and ``Float8DynamicActivationFloat8WeightConfig`` (the input fake-quantized onto
  float8 each call with its own per-tensor or per-token scale): ``Float8Linear``; the
  scale is ``max(amax / max_finite, 1e-12)`` (torchao's float8 scale) and the codes are
  ``Q.quantize``'s on the float grid (docs/numerics.md), bit-identical on both streams.
* ``NVFP4WeightOnlyConfig(use_dynamic_per_tensor_scale=False)``: MLX's nvfp4 block
  format (``QuantizedLinearMX``); with the per-tensor scale (the default ``True``)
  ``BlockDynamicLinear`` holding the codes of ``W / t``, ``t = max |W| / (448 * 6)``.
* ``MXDynamicActivationMXWeightConfig`` (mxfp8 / mxfp4) and
  ``NVFP4DynamicActivationNVFP4WeightConfig``: ``BlockDynamicLinear``, the input sent
  through the same block format on every call (blocks along the reduction axis, nvfp4
  with its own per-tensor scale), then a float32 matmul with the dequantized weight.

Codes, scales and zero points are those of ``choose_qparams_affine`` /
``quantize_affine`` (bit-identical on both streams). Float outputs: the streams agree
within float32 summation tolerance (relative 1e-5 of ``sum |x| |w|``).

>>> import lucid
>>> import lucid.quantization as Q
>>> m = lucid.nn.Sequential(lucid.nn.Linear(64, 8), lucid.nn.ReLU(), lucid.nn.Linear(8, 4))
>>> Q.quantize_(m, Q.Int8WeightOnlyConfig())
>>> type(m[0]).__name__, m(lucid.ones(2, 64)).shape
('AffineWeightOnlyLinear', (2, 4))
"""
from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

import lucid._namespace as lucid
from .. import _C
from ..nn.layers import Linear
from ..nn import functional as F
from ..nn.module import Module
from ..nn.quantized.mlx_linear import QuantizedLinearMLX, QuantizedLinearMX
from .affine_primitives import (F32_EPS, MappingType, PerAxis, PerGroup, PerRow, PerTensor, PerToken,
                                ZeroPointDomain, choose_qparams_affine, dequantize_affine, get_block_size,
                                quantize_affine)
from .primitives import dequantize, fake_quantize, int4_weight_only_linear, pack_int4, qmatmul, quantize
from .mx_formats import dequantize_mx, quantize_mx
from .qdtype import as_qdtype

__all__ = ["AOBaseConfig", "Int4WeightOnlyConfig", "Int8WeightOnlyConfig", "IntxWeightOnlyConfig",
           "Int8DynamicActivationInt8WeightConfig", "Int8DynamicActivationInt4WeightConfig",
           "Float8WeightOnlyConfig", "Float8DynamicActivationFloat8WeightConfig",
           "MXDynamicActivationMXWeightConfig", "NVFP4WeightOnlyConfig", "NVFP4DynamicActivationNVFP4WeightConfig",
           "FqnToConfig", "quantize_", "AffineWeightOnlyLinear", "Int8DynamicLinear", "Int8DynActInt4WeightLinear", "Float8Linear",
           "InputScaledLinear", "int4_mlx_linear_from_codes", "BlockDynamicLinear", "block_quantize_dequantize",
           "nvfp4_per_tensor_scale"]

INT4_EPS = 1e-6  # torchao's tinygemm int4 weight-only eps


class AOBaseConfig:
    """Base of the ``quantize_`` configs (torchao's ``AOBaseConfig``)."""


@dataclass
class Int4WeightOnlyConfig(AOBaseConfig):
    """int4 weight-only, one (scale, float zero point) per ``group_size`` input features."""
    group_size: int = 128
    set_inductor_config: bool = True
    version: int = 2


@dataclass
class Int8WeightOnlyConfig(AOBaseConfig):
    """int8 weight-only, symmetric; ``granularity`` PerRow (default), PerTensor or PerGroup."""
    group_size: Optional[int] = None
    granularity: object = field(default_factory=PerRow)
    set_inductor_config: bool = True
    version: int = 2

    def __post_init__(self):
        if self.group_size is not None:
            raise ValueError("Int8WeightOnlyConfig(): 'group_size' is torchao's removed version 1 argument; use "
                             f"granularity=PerGroup({self.group_size})")
        if not isinstance(self.granularity, (PerTensor, PerRow, PerGroup)):
            raise ValueError(f"Int8WeightOnlyConfig(): granularity must be PerTensor, PerRow or PerGroup, got "
                             f"{self.granularity!r}")


@dataclass
class IntxWeightOnlyConfig(AOBaseConfig):
    """1 to 8 bit weight-only: ``weight_dtype`` ``"int1"`` .. ``"int8"`` (or lucid.int8, or
    ``bits=``), ``granularity`` PerAxis(0) or PerGroup(g), ``mapping_type`` SYMMETRIC,
    SYMMETRIC_NO_CLIPPING_ERR or ASYMMETRIC."""
    weight_dtype: object = "int8"
    granularity: object = field(default_factory=lambda: PerAxis(0))
    mapping_type: MappingType = MappingType.SYMMETRIC
    scale_dtype: object = None
    bits: Optional[int] = None
    version: int = 2

    def __post_init__(self):
        if self.bits is not None:
            if isinstance(self.bits, bool) or self.bits not in range(1, 9):
                raise ValueError(f"IntxWeightOnlyConfig(): bits must be 1 .. 8, got {self.bits!r}")
            self.weight_dtype = f"int{self.bits}"
        name = self.weight_dtype if isinstance(self.weight_dtype, str) else getattr(self.weight_dtype, "name", "")
        if name not in [f"int{b}" for b in range(1, 9)]:
            raise ValueError(f"IntxWeightOnlyConfig(): weight_dtype must be 'int1' .. 'int8', got {self.weight_dtype!r}")
        self.weight_dtype = name
        if not isinstance(self.granularity, (PerAxis, PerGroup)):
            raise ValueError(f"IntxWeightOnlyConfig(): granularity must be PerAxis or PerGroup, got "
                             f"{self.granularity!r}")
        if isinstance(self.granularity, PerAxis) and self.granularity.axis != 0:
            raise ValueError("IntxWeightOnlyConfig(): only PerAxis(0) (per output channel) is supported")
        if not isinstance(self.mapping_type, MappingType):
            raise TypeError(f"IntxWeightOnlyConfig(): mapping_type must be a MappingType, got {self.mapping_type!r}")


@dataclass
class Int8DynamicActivationInt8WeightConfig(AOBaseConfig):
    """Per-token dynamic int8 activations x per-row symmetric int8 weights."""
    act_mapping_type: MappingType = MappingType.SYMMETRIC
    weight_only_decode: bool = False
    granularity: object = field(default_factory=PerRow)
    set_inductor_config: bool = True
    version: int = 2
    reduce_range: bool = False

    def __post_init__(self):
        if self.act_mapping_type not in (MappingType.SYMMETRIC, MappingType.ASYMMETRIC):
            raise ValueError("Int8DynamicActivationInt8WeightConfig(): act_mapping_type must be SYMMETRIC or "
                             f"ASYMMETRIC, got {self.act_mapping_type!r}")
        if not isinstance(self.granularity, PerRow):
            raise ValueError("Int8DynamicActivationInt8WeightConfig(): only granularity=PerRow() is supported, got "
                             f"{self.granularity!r}")
        if self.weight_only_decode:
            raise NotImplementedError("Int8DynamicActivationInt8WeightConfig(): weight_only_decode is not supported")


@dataclass
class Int8DynamicActivationInt4WeightConfig(AOBaseConfig):
    """Per-token asymmetric int8 activations x symmetric int4 group weights."""
    group_size: int = 32
    mapping_type: MappingType = MappingType.SYMMETRIC
    act_mapping_type: MappingType = MappingType.ASYMMETRIC
    set_inductor_config: bool = True

    def __post_init__(self):
        if self.mapping_type is not MappingType.SYMMETRIC:
            raise ValueError("Int8DynamicActivationInt4WeightConfig(): only mapping_type=SYMMETRIC weights")
        if self.act_mapping_type not in (MappingType.SYMMETRIC, MappingType.ASYMMETRIC):
            raise ValueError("Int8DynamicActivationInt4WeightConfig(): act_mapping_type must be SYMMETRIC or "
                             "ASYMMETRIC")


FLOAT8_SCALE_EPS = 1e-12  # torchao's lower bound of a float8 scale


@dataclass
class Float8WeightOnlyConfig(AOBaseConfig):
    """torchao's float8 weight-only config: ``weight_dtype`` codes with a per-row (default)
    or per-tensor scale; activations stay float."""
    weight_dtype: object = "float8_e4m3fn"
    set_inductor_config: bool = True
    version: int = 2
    granularity: object = None

    def __post_init__(self):
        if self.granularity is None:
            self.granularity = PerRow()


@dataclass
class Float8DynamicActivationFloat8WeightConfig(AOBaseConfig):
    """torchao's float8 x float8 config; granularity None means PerTensor for both (PerRow:
    per output row of the weight, per token of the input)."""
    activation_dtype: object = "float8_e4m3fn"
    weight_dtype: object = "float8_e4m3fn"
    granularity: object = None
    activation_value_lb: Optional[float] = None
    activation_value_ub: Optional[float] = None
    set_inductor_config: bool = True
    version: int = 2

    def __post_init__(self):
        g = self.granularity
        if g is None:
            g = PerTensor()
        if not isinstance(g, (list, tuple)):
            g = [g, g]
        if len(g) != 2 or not all(isinstance(x, (PerTensor, PerRow)) for x in g) or type(g[0]) is not type(g[1]):
            raise ValueError("Float8DynamicActivationFloat8WeightConfig(): granularity must be PerTensor or PerRow, "
                             f"the same for activations and weights, got {self.granularity!r}")
        self.granularity = list(g)


_MX_ELEM = {"float8_e4m3fn": "mxfp8", "float4_e2m1fn": "mxfp4", "float4_e2m1fn_x2": "mxfp4"}


def _mx_mode_of(dtype, name):
    key = getattr(dtype, "name", None) or str(dtype).replace("torch.", "")
    if key not in _MX_ELEM:
        raise ValueError(f"MXDynamicActivationMXWeightConfig(): {name} must be float8_e4m3fn (mxfp8) or "
                         f"float4_e2m1fn / float4_e2m1fn_x2 (mxfp4), got {dtype!r}")
    return _MX_ELEM[key]


@dataclass
class MXDynamicActivationMXWeightConfig(AOBaseConfig):
    """torchao's OCP MX inference config: weights quantized once, activations on every
    call, both onto MX blocks of 32 along the reduction axis with E8M0 scales (RCEIL:
    the scale is 2^ceil(log2(amax / max_elem)), MLX's rule). ``activation_dtype`` and
    ``weight_dtype`` (equal, as torchao requires): ``"float8_e4m3fn"`` (mxfp8) or
    ``"float4_e2m1fn"`` / ``"float4_e2m1fn_x2"`` (mxfp4). ``kernel_preference`` is
    accepted and has one meaning here (the dequantized product); ``scaling_mode`` must
    be ``"rceil"``."""
    block_size: int = 32
    activation_dtype: object = "float8_e4m3fn"
    weight_dtype: object = "float8_e4m3fn"
    kernel_preference: object = "auto"
    scaling_mode: object = "rceil"

    def __post_init__(self):
        if self.block_size != 32:
            raise ValueError(f"MXDynamicActivationMXWeightConfig(): block_size must be 32 (OCP MX), got "
                             f"{self.block_size!r}")
        a = _mx_mode_of(self.activation_dtype, "activation_dtype")
        w = _mx_mode_of(self.weight_dtype, "weight_dtype")
        if a != w:
            raise ValueError("MXDynamicActivationMXWeightConfig(): activation_dtype and weight_dtype must match, "
                             f"got {self.activation_dtype!r} and {self.weight_dtype!r}")
        mode = getattr(self.scaling_mode, "value", self.scaling_mode)
        if str(mode).lower() != "rceil":
            raise NotImplementedError(f"MXDynamicActivationMXWeightConfig(): scaling_mode {self.scaling_mode!r}: "
                                      "lucid's MX scales are MLX's (RCEIL) only")

    @property
    def mode(self):
        return _mx_mode_of(self.weight_dtype, "weight_dtype")


@dataclass
class NVFP4WeightOnlyConfig(AOBaseConfig):
    """torchao's NVFP4 weight-only config: E2M1 codes, E4M3 scales over blocks of 16,
    and with ``use_dynamic_per_tensor_scale`` (the default) a float32 per-tensor scale
    ``max |W| / (448 * 6)`` above them (docs/numerics.md, two-level NVFP4)."""
    use_dynamic_per_tensor_scale: bool = True


@dataclass
class NVFP4DynamicActivationNVFP4WeightConfig(AOBaseConfig):
    """torchao's NVFP4 x NVFP4 inference config: the weight as ``NVFP4WeightOnlyConfig``,
    the input quantized onto NVFP4 on every call (blocks of 16 along the reduction axis;
    with ``use_dynamic_per_tensor_scale`` its own per-tensor scale from that call's
    ``max |x|``). ``use_triton_kernel`` is accepted (one kernel here); ``step``
    ("prepare" / "convert", torchao's static activation scale) is not implemented."""
    use_triton_kernel: bool = True
    use_dynamic_per_tensor_scale: bool = True
    step: object = None

    def __post_init__(self):
        if self.step is not None:
            raise NotImplementedError("NVFP4DynamicActivationNVFP4WeightConfig(): step (the observer flow for a "
                                      "static activation per-tensor scale) is not implemented; use step=None")


@dataclass
class FqnToConfig(AOBaseConfig):
    """Per-layer configs: keys are module fqns, ``"re:<regex>"`` (``re.fullmatch`` on the
    fqn; the first matching one wins) or ``"_default"`` (every other ``nn.Linear``); a
    value of None leaves the layer float. An exact fqn beats any regex."""
    fqn_to_config: "OrderedDict[str, Optional[AOBaseConfig]]" = field(default_factory=OrderedDict)
    version: int = 1

    def __post_init__(self):
        if not isinstance(self.fqn_to_config, dict):
            raise TypeError(f"FqnToConfig(): fqn_to_config must be a dict, got {type(self.fqn_to_config).__name__}")
        for k, v in self.fqn_to_config.items():
            if not isinstance(k, str):
                raise TypeError(f"FqnToConfig(): keys must be str, got {k!r}")
            if v is not None and not isinstance(v, AOBaseConfig):
                raise TypeError(f"FqnToConfig(): the value of {k!r} must be a config or None, got {v!r}")
            if k.startswith("re:"):
                re.compile(k[3:])

    def config_for(self, fqn, module):
        """The config this mapping gives the module at ``fqn`` (None: leave it)."""
        if fqn in self.fqn_to_config:
            return self.fqn_to_config[fqn]
        for k, v in self.fqn_to_config.items():
            if k.startswith("re:") and re.fullmatch(k[3:], fqn):
                return v
        if "_default" in self.fqn_to_config and isinstance(module, Linear):
            return self.fqn_to_config["_default"]
        return None


def _bias_of(layer):
    return None if layer.bias is None else layer.bias.detach().to(lucid.float32).clone()


class AffineWeightOnlyLinear(Module):
    """Weight-only linear on an affine integer grid: ``qdata`` (int8 codes), ``scale`` and
    ``zero_point`` (int8) shaped by ``block_size``. A per-row symmetric weight runs
    ``linear(x, float(qdata)) * scale + bias`` (torchao's order); any other block
    ``linear(x, dequantize_affine(...)) + bias``."""

    def __init__(self, in_features, out_features, qdata, scale, zero_point, block_size, weight_dtype, bias=None):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.block_size, self.weight_dtype = tuple(block_size), weight_dtype
        self.register_buffer("qdata", qdata)
        self.register_buffer("scale", scale)
        self.register_buffer("zero_point", zero_point)
        self.register_buffer("bias", bias)
        self._per_row = (self.block_size == (1, self.in_features)
                         and not bool((zero_point.to(lucid.int32) != 0).any().item()))

    def dequantized_weight(self):
        return dequantize_affine(self.qdata, self.block_size, self.scale, self.zero_point, self.weight_dtype)

    def forward(self, x):
        if self._per_row:
            y = F.linear(x, self.qdata.to(lucid.float32)) * self.scale.reshape(-1).to(lucid.float32)
        else:
            y = F.linear(x, self.dequantized_weight())
        return y if self.bias is None else y + self.bias

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"weight_dtype={self.weight_dtype}, block_size={self.block_size}")


def _per_token_qparams(x, mapping, qmin=-128, qmax=127, eps=F32_EPS):
    block = get_block_size(x.shape, PerToken())
    s, z = choose_qparams_affine(x, mapping, block, lucid.int8, qmin, qmax, eps=eps, scale_dtype=lucid.float32,
                                 zero_point_dtype=lucid.int8)
    return block, s, z


class Int8DynamicLinear(Module):
    """Dynamic int8 x int8: each call takes per-token int8 qparams of ``x``
    (``choose_qparams_affine`` over the last axis, eps 2^-23), quantizes it, and
    computes ``acc = xq @ qdata.T`` exactly in int32 (``Q.qmatmul``), then
    ``fl(fl(acc) * x_scale) * w_scale`` (asymmetric activations subtract
    ``x_zero_point * x_scale * rowsum(qdata)`` before the weight scale), plus ``bias``."""

    def __init__(self, in_features, out_features, qdata, scale, bias=None, act_mapping_type=MappingType.SYMMETRIC):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.act_mapping_type = act_mapping_type
        self.register_buffer("qdata", qdata)
        self.register_buffer("scale", scale)
        self.register_buffer("bias", bias)
        self.register_buffer("_row_sums", qdata.to(lucid.int32).sum(dim=1).to(lucid.float32))

    def forward(self, x):
        if not isinstance(x, lucid.Tensor) or not x.dtype.is_floating_point:
            raise TypeError(f"Int8DynamicLinear.forward(): expected a float lucid.Tensor, got "
                            f"{getattr(x, 'dtype', type(x).__name__)!r}")
        lead = x.shape[:-1]
        x2 = x.to(lucid.float32).reshape(-1, self.in_features)
        block, s, z = _per_token_qparams(x2, self.act_mapping_type)
        xq = quantize_affine(x2, block, s, z, lucid.int8)
        acc = qmatmul(xq, 1.0, 0, self.qdata, 1.0, 0)
        y = acc * s.reshape(-1, 1)
        if self.act_mapping_type is MappingType.ASYMMETRIC:
            y = y - (z.to(lucid.float32).reshape(-1, 1) * s.reshape(-1, 1)) * self._row_sums
        y = y * self.scale.reshape(-1)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*lead, self.out_features)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"act_mapping_type={self.act_mapping_type.name}")


class Int8DynActInt4WeightLinear(Module):
    """Per-token int8 activations (quantized then dequantized each call; torchao's plain
    layout) x symmetric int4 group weights held packed (``weight_packed``,
    ``weight_scale``), run by ``Q.int4_weight_only_linear``."""

    def __init__(self, in_features, out_features, weight_packed, weight_scale, group_size, bias=None,
                 act_mapping_type=MappingType.ASYMMETRIC):
        super().__init__()
        self.in_features, self.out_features, self.group_size = int(in_features), int(out_features), int(group_size)
        self.act_mapping_type = act_mapping_type
        self.register_buffer("weight_packed", weight_packed)
        self.register_buffer("weight_scale", weight_scale)
        self.register_buffer("bias", bias)

    def forward(self, x):
        lead = x.shape[:-1]
        x2 = x.to(lucid.float32).reshape(-1, self.in_features)
        block, s, z = _per_token_qparams(x2, self.act_mapping_type)
        xdq = dequantize_affine(quantize_affine(x2, block, s, z, lucid.int8), block, s, z, lucid.int8)
        y = int4_weight_only_linear(xdq, self.weight_packed, self.weight_scale, group_size=self.group_size,
                                    bias=self.bias)
        return y.reshape(*lead, self.out_features)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, group_size={self.group_size}"


class InputScaledLinear(Module):
    """``inner(x * input_scale)``: a quantized linear whose weight was multiplied per input
    channel by ``1 / input_scale`` before quantization (AWQ, SmoothQuant), for models
    where that scale cannot be folded into the op before it."""

    def __init__(self, inner, input_scale):
        super().__init__()
        self.inner = inner
        self.register_buffer("input_scale", input_scale)

    def forward(self, x):
        return self.inner(x * self.input_scale)


def int4_mlx_linear_from_codes(codes, scales, biases, group_size, bias, device):
    """A ``QuantizedLinearMLX`` (4 bits) holding uint4 ``codes`` (numpy (N, K) in 0..15)
    with float32 ``scales`` / ``biases`` (numpy (N, K / group_size)): the weight is
    ``codes * scales + biases``. Eight codes to a 32-bit word, code ``j`` at bit ``4 j``."""
    n, k = codes.shape
    c = np.ascontiguousarray(codes, dtype=np.uint32).reshape(n, k // 8, 8)
    words = np.zeros((n, k // 8), dtype=np.uint32)
    for j in range(8):
        words |= c[:, :, j] << np.uint32(4 * j)
    mod = QuantizedLinearMLX(k, n, bias is not None, bits=4, group_size=group_size)
    mod.packed_weight = lucid.tensor(words.view(np.int32)).to(device)
    mod.scales = lucid.tensor(np.ascontiguousarray(scales, dtype=np.float32)).to(device)
    mod.biases = lucid.tensor(np.ascontiguousarray(biases, dtype=np.float32)).to(device)
    if bias is not None:
        mod.bias = bias.to(device)
    return mod


def _int4_weight_only(layer, config):
    g = config.group_size
    w = layer.weight.detach().to(lucid.float32)
    n, k = w.shape
    if g not in (32, 64, 128):
        raise ValueError(f"quantize_(): Int4WeightOnlyConfig group_size must be 32, 64 or 128 (MLX's group "
                         f"sizes), got {g!r}")
    if k % g:
        return layer  # torchao leaves a weight whose width the group does not divide in float
    block = (1, g)
    s, zp = choose_qparams_affine(w, MappingType.ASYMMETRIC, block, "uint4", eps=INT4_EPS, preserve_zero=False,
                                  zero_point_domain=ZeroPointDomain.FLOAT, keepdim=True)
    q = quantize_affine(w, block, s, zp, "uint4", zero_point_domain=ZeroPointDomain.FLOAT)
    mins = zp - s * 8.0  # the value of code 0: quantize_affine's (zero_point - scale * mid)
    return int4_mlx_linear_from_codes(q.numpy(), s.numpy(), mins.numpy(), g, _bias_of(layer), w.device)


def _affine_weight_only(layer, granularity, dtype, mapping, eps=None, scale_dtype=None):
    w = layer.weight.detach().to(lucid.float32)
    n, k = w.shape
    if isinstance(granularity, PerGroup) and k % granularity.group_size:
        return layer
    block = get_block_size(w.shape, granularity)
    s, z = choose_qparams_affine(w, mapping, block, dtype, eps=eps, scale_dtype=scale_dtype,
                                 zero_point_dtype=lucid.int8, keepdim=True)
    q = quantize_affine(w, block, s, z, dtype)
    return AffineWeightOnlyLinear(k, n, q, s.to(lucid.float32), z, block, dtype, _bias_of(layer))


def _int8_dynamic(layer, config):
    w = layer.weight.detach().to(lucid.float32)
    n, k = w.shape
    qmin, qmax = (-64, 63) if config.reduce_range else (-128, 127)
    block = (1, k)
    s, z = choose_qparams_affine(w, MappingType.SYMMETRIC, block, lucid.int8, qmin, qmax, eps=F32_EPS,
                                 scale_dtype=lucid.float32, zero_point_dtype=lucid.int8)
    q = quantize_affine(w, block, s, z, lucid.int8, qmin, qmax)
    return Int8DynamicLinear(k, n, q, s, _bias_of(layer), config.act_mapping_type)


def _int8_dyn_int4(layer, config):
    g = config.group_size
    w = layer.weight.detach().to(lucid.float32)
    n, k = w.shape
    if isinstance(g, bool) or not isinstance(g, int) or g % 32 or g < 32:
        raise ValueError(f"quantize_(): Int8DynamicActivationInt4WeightConfig group_size must be a multiple of 32, "
                         f"got {g!r}")
    if k % g:
        return layer
    block = (1, g)
    s, z = choose_qparams_affine(w, MappingType.SYMMETRIC, block, "int4", eps=F32_EPS, scale_dtype=lucid.float32,
                                 keepdim=True)
    q = quantize_affine(w, block, s, z, "int4")
    return Int8DynActInt4WeightLinear(k, n, pack_int4(q), s, g, _bias_of(layer), config.act_mapping_type)


class Float8Linear(Module):
    """A linear with float8 weights: ``qdata`` (the codes' bit patterns, uint8) and
    ``scale`` (per output row, or one), on ``weight_dtype``'s grid. With ``activation_dtype``
    each call fake-quantizes the input onto that grid with its own scale (per tensor, or per
    token with ``per_row``). The product runs in float32 on the dequantized values."""

    def __init__(self, in_features, out_features, qdata, scale, weight_dtype, per_row, activation_dtype=None,
                 bias=None):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.weight_dtype, self.per_row = as_qdtype(weight_dtype, "Float8Linear"), bool(per_row)
        self.activation_dtype = None if activation_dtype is None else as_qdtype(activation_dtype, "Float8Linear")
        self.register_buffer("qdata", qdata)
        self.register_buffer("scale", scale)
        self.register_buffer("bias", bias)

    def dequantized_weight(self):
        qd = self.weight_dtype
        if self.per_row:
            zp = lucid.zeros(self.out_features, dtype=lucid.int32, device=self.qdata.device.type)
            return dequantize(self.qdata, self.scale, zp, ch_axis=0, qdtype=qd)
        return dequantize(self.qdata, self.scale, 0, qdtype=qd)

    def forward(self, x):
        if self.activation_dtype is not None:
            qd = self.activation_dtype
            rows = x.reshape(-1, self.in_features)
            if self.per_row:
                s = _float8_scale(rows, qd, dim=1)
                zp = lucid.zeros(rows.shape[0], dtype=lucid.int32, device=rows.device.type)
                rows = fake_quantize(rows, s, zp, -int(qd.quant_max), int(qd.quant_max), 0, qdtype=qd)
            else:
                rows = fake_quantize(rows, _float8_scale(rows, qd), 0, -int(qd.quant_max), int(qd.quant_max),
                                     qdtype=qd)
            x = rows.reshape(tuple(x.shape))
        if x.dtype == lucid.float32 and not (x.requires_grad and lucid.is_grad_enabled()):
            # CPU stream, up to 8 rows: the codes are read in place; else dequantize + linear
            return _C.float8_weight_linear(x, self.qdata, self.scale, self.weight_dtype.name, self.bias)
        y = F.linear(x, self.dequantized_weight())
        return y if self.bias is None else y + self.bias

    def extra_repr(self):
        act = "" if self.activation_dtype is None else f", activation_dtype={self.activation_dtype.name}"
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"weight_dtype={self.weight_dtype.name}, per_row={self.per_row}{act}")


def _float8_scale(t, qd, dim=None):
    """``max(amax / max_finite, 1e-12)`` in float32, of the whole tensor or along ``dim``."""
    amax = t.abs().amax() if dim is None else t.abs().amax(dim=dim)
    s = amax.to(lucid.float32) / float(qd.quant_max)
    return lucid.clamp(s, min=FLOAT8_SCALE_EPS)


def _float8(layer, weight_dtype, per_row, activation_dtype=None):
    qd = as_qdtype(weight_dtype, "quantize_")
    if not qd.is_floating or qd.bits != 8:
        raise ValueError(f"quantize_(): a float8 config's weight_dtype must be float8_e4m3fn or float8_e5m2, "
                         f"got {qd.name}")
    w = layer.weight.detach().to(lucid.float32)
    n, k = w.shape
    if per_row:
        s = _float8_scale(w, qd, dim=1)
        codes = quantize(w, s, lucid.zeros(n, dtype=lucid.int32, device=w.device.type), qd, ch_axis=0)
    else:
        s = _float8_scale(w, qd)
        codes = quantize(w, s, 0, qd)
    return Float8Linear(k, n, codes, s, qd, per_row, activation_dtype, _bias_of(layer))


NVFP4_PER_TENSOR_DIVISOR = 448.0 * 6.0  # E4M3's and E2M1's largest finite values: torchao's per-tensor scale


def nvfp4_per_tensor_scale(x):
    """NVFP4's second-level scale of ``x``: ``fl(max |x| / 2688)`` in float32 (torchao's
    ``per_tensor_amax_to_scale``), so the largest block's E4M3 scale lands near 448; 1
    where that is 0 or not finite (an all-zero tensor, or one holding inf / NaN, is
    quantized on its block scales alone). A float32 tensor of shape ``()``."""
    amax = x.detach().to(lucid.float32).abs().amax()
    pts = amax / NVFP4_PER_TENSOR_DIVISOR
    ok = lucid.isfinite(pts) & (pts > 0)
    return lucid.where(ok, pts, lucid.ones_like(pts))


def block_quantize_dequantize(x, mode, per_tensor_scale=False):
    """``x`` (..., K) through the block format ``mode`` ("mxfp8", "mxfp4", "nvfp4") and
    back, blocks along the last axis: ``dequantize_mx(quantize_mx(x))``; with
    ``per_tensor_scale`` (nvfp4) ``dequantize_mx(quantize_mx(x / t)) * t``, ``t =
    nvfp4_per_tensor_scale(x)``. Float32, ``x``'s shape."""
    x = x.to(lucid.float32)
    if not per_tensor_scale:
        words, scales = quantize_mx(x, mode)
        return dequantize_mx(words, scales, mode=mode)
    t = nvfp4_per_tensor_scale(x)
    words, scales = quantize_mx(x / t, mode)
    return dequantize_mx(words, scales, mode=mode) * t


class BlockDynamicLinear(Module):
    """A linear with block-format weights (``weight`` words and uint8 ``scales`` in MLX's
    layout for ``mode`` "mxfp8", "mxfp4" or "nvfp4"; with ``per_tensor_scale`` nvfp4's
    float32 second-level ``weight_scale``, the weight being ``dequantize_mx(...) *
    weight_scale``). With ``dynamic_activation`` each call sends the input through the
    same format along its last (the reduction) axis, its own per-tensor scale included
    (``block_quantize_dequantize``). The product is a float32 matmul of the dequantized
    operands, plus ``bias``."""

    def __init__(self, in_features, out_features, weight, scales, mode, weight_scale=None,
                 dynamic_activation=False, bias=None):
        super().__init__()
        self.in_features, self.out_features, self.mode = int(in_features), int(out_features), mode
        self.per_tensor_scale = weight_scale is not None
        self.dynamic_activation = bool(dynamic_activation)
        self.register_buffer("weight", weight)
        self.register_buffer("scales", scales)
        self.register_buffer("weight_scale", weight_scale)
        self.register_buffer("bias", bias)

    @classmethod
    def from_float(cls, layer, mode, per_tensor_scale, dynamic_activation):
        w = layer.weight.detach().to(lucid.float32)
        n, k = w.shape
        t = None
        if per_tensor_scale:
            t = nvfp4_per_tensor_scale(w)
            w = w / t
        words, scales = quantize_mx(w, mode)
        return cls(k, n, words, scales, mode, t, dynamic_activation, _bias_of(layer))

    def dequantized_weight(self):
        w = dequantize_mx(self.weight, self.scales, mode=self.mode)
        return w if self.weight_scale is None else w * self.weight_scale

    def forward(self, x):
        if not isinstance(x, lucid.Tensor) or not x.dtype.is_floating_point:
            raise TypeError(f"BlockDynamicLinear.forward(): expected a float lucid.Tensor, got "
                            f"{getattr(x, 'dtype', type(x).__name__)!r}")
        if x.ndim < 1 or x.shape[-1] != self.in_features:
            raise ValueError(f"BlockDynamicLinear.forward(): expected input (..., {self.in_features}), got shape "
                             f"{tuple(x.shape)}")
        lead = tuple(x.shape[:-1])
        x2 = x.to(lucid.float32).reshape(-1, self.in_features)
        if self.dynamic_activation:
            x2 = block_quantize_dequantize(x2, self.mode, self.per_tensor_scale)
        y = F.linear(x2, self.dequantized_weight(), self.bias)
        return y.reshape(*lead, self.out_features)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, mode={self.mode}, "
                f"per_tensor_scale={self.per_tensor_scale}, dynamic_activation={self.dynamic_activation}")


def _apply(layer, config):
    """The quantized replacement of one float ``nn.Linear`` under ``config``."""
    if isinstance(config, Int4WeightOnlyConfig):
        return _int4_weight_only(layer, config)
    if isinstance(config, Int8WeightOnlyConfig):
        return _affine_weight_only(layer, config.granularity, "int8", MappingType.SYMMETRIC, eps=F32_EPS)
    if isinstance(config, IntxWeightOnlyConfig):
        return _affine_weight_only(layer, config.granularity, config.weight_dtype, config.mapping_type,
                                   scale_dtype=config.scale_dtype)
    if isinstance(config, Int8DynamicActivationInt8WeightConfig):
        return _int8_dynamic(layer, config)
    if isinstance(config, Int8DynamicActivationInt4WeightConfig):
        return _int8_dyn_int4(layer, config)
    if isinstance(config, Float8WeightOnlyConfig):
        return _float8(layer, config.weight_dtype, isinstance(config.granularity, PerRow))
    if isinstance(config, Float8DynamicActivationFloat8WeightConfig):
        return _float8(layer, config.weight_dtype, isinstance(config.granularity[0], PerRow),
                       config.activation_dtype)
    if isinstance(config, NVFP4WeightOnlyConfig):
        if layer.in_features % 32:
            return layer  # MLX's layout takes input features in multiples of 32 (two nvfp4 groups)
        if not config.use_dynamic_per_tensor_scale:
            return QuantizedLinearMX.from_float(layer, mode="nvfp4")
        return BlockDynamicLinear.from_float(layer, "nvfp4", per_tensor_scale=True, dynamic_activation=False)
    if isinstance(config, NVFP4DynamicActivationNVFP4WeightConfig):
        if layer.in_features % 32:
            return layer
        return BlockDynamicLinear.from_float(layer, "nvfp4", per_tensor_scale=config.use_dynamic_per_tensor_scale,
                                             dynamic_activation=True)
    if isinstance(config, MXDynamicActivationMXWeightConfig):
        if layer.in_features % 32:
            return layer
        return BlockDynamicLinear.from_float(layer, config.mode, per_tensor_scale=False, dynamic_activation=True)
    raise TypeError(f"quantize_(): argument 'config' must be a quantization config, got {type(config).__name__}")


def _is_linear(mod, fqn=""):
    return isinstance(mod, Linear)


def _check_config(config):
    if isinstance(config, FqnToConfig):
        for v in config.fqn_to_config.values():
            if v is not None:
                _check_config(v)
    elif not isinstance(config, AOBaseConfig):
        raise TypeError(f"quantize_(): argument 'config' must be a quantization config (Int4WeightOnlyConfig, ...), "
                        f"got {type(config).__name__}")


def quantize_(model, config, filter_fn=None, device=None):
    """Quantizes ``model``'s linears in place (returns None, as torchao's does).

    ``filter_fn(module, fqn)`` picks the modules (default: every ``nn.Linear``); with an
    ``FqnToConfig`` it must be None. A layer the config cannot hold (a group size that
    does not divide its input width) stays float, as in torchao. Every replacement is
    built before any is installed, so an error leaves the model unchanged."""
    if not isinstance(model, Module):
        raise TypeError(f"quantize_(): argument 'model' must be an nn.Module, got {type(model).__name__}")
    _check_config(config)
    if isinstance(config, FqnToConfig) and filter_fn is not None:
        raise ValueError("quantize_(): filter_fn must be None when config is an FqnToConfig")
    if filter_fn is not None and not callable(filter_fn):
        raise TypeError(f"quantize_(): argument 'filter_fn' must be callable, got {type(filter_fn).__name__}")
    flt = _is_linear if filter_fn is None else filter_fn
    swaps = []
    for fqn, mod in model.named_modules():
        if not isinstance(mod, Linear):
            continue
        if isinstance(config, FqnToConfig):
            cfg = config.config_for(fqn, mod)
            if cfg is None:
                continue
        else:
            if not flt(mod, fqn):
                continue
            cfg = config
        new = _apply(mod, cfg)
        if new is not mod:
            swaps.append((fqn, new.to(device) if device is not None else new))
    for fqn, new in swaps:
        _set_submodule(model, fqn, new)


def _set_submodule(model, fqn, new):
    if fqn == "":
        raise ValueError("quantize_(): the model itself is an nn.Linear; wrap it in a container to swap it")
    *parents, leaf = fqn.split(".")
    parent = model
    for p in parents:
        parent = getattr(parent, p) if not p.isdigit() else parent[int(p)]
    if leaf.isdigit() and hasattr(parent, "__setitem__"):
        parent[int(leaf)] = new
    else:
        setattr(parent, leaf, new)
