"""Quantized LayerNorm (``lucid.nn.quantized.LayerNorm``), as PyTorch's
``torch.ao.nn.quantized.LayerNorm``: QTensor in, QTensor out on the output grid.

The statistics come from the integer codes exactly (int64 sums of ``d = q - zx`` and
``d * d``), the rest is a fixed sequence of correctly rounded float32 operations
(docs/numerics.md, "Quantized LayerNorm"). Each step is one elementwise lucid op, so
the CPU and GPU streams compute the same bits without a dedicated kernel.
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid._namespace as lucid

from ... import _dtype
from ..module import Module
from ...quantization.primitives import quantize
from ...quantization.qdtype import as_qdtype
from ...quantization.qtensor import QTensor
from .checks import QuantizedStateMixin, as_qtensor
from .observed_qparams import observer_qparams, requant_param_buffers

# N * S2 <= N^2 * 255^2 must fit int64 (docs/numerics.md).
_MAX_N = 11_900_000


def _shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral) and not isinstance(normalized_shape, bool):
        normalized_shape = (normalized_shape,)
    try:
        shape = tuple(int(s) for s in normalized_shape)
    except TypeError:
        shape = ()
    if not shape or any(s <= 0 for s in shape):
        raise ValueError(f"quantized LayerNorm: argument 'normalized_shape' must be positive sizes, got "
                         f"{normalized_shape!r}")
    return shape


def _affine(value, shape, name):
    """``value`` (a Tensor or None) as a detached float32 tensor of ``shape``."""
    if value is None:
        return None
    if not isinstance(value, lucid.Tensor):
        raise TypeError(f"quantized LayerNorm: argument '{name}' must be a lucid.Tensor or None, got "
                        f"{type(value).__name__}")
    if tuple(value.shape) != shape:
        raise ValueError(f"quantized LayerNorm: argument '{name}' must have shape {shape}, got {tuple(value.shape)}")
    return value.detach().to(_dtype.float32).clone()


def quantized_layer_norm(x, normalized_shape, weight, bias, eps, out_scale, out_zero_point, out_dtype):
    """The formula of docs/numerics.md on a per-tensor 8-bit QTensor ``x``; returns a QTensor."""
    shape = tuple(normalized_shape)
    codes = x.int_repr()
    k = len(shape)
    if codes.ndim < k or tuple(codes.shape[-k:]) != shape:
        raise ValueError(f"quantized LayerNorm.forward(): expected an input whose trailing dimensions are {shape}, "
                         f"got shape {tuple(codes.shape)}")
    if x.dtype.name not in ("quint8", "qint8"):
        raise ValueError(f"quantized LayerNorm.forward(): expected a quint8 or qint8 input, got {x.dtype.name}")
    n = int(np.prod(shape))
    if n > _MAX_N:
        raise ValueError(f"quantized LayerNorm.forward(): the normalized shape holds {n} elements, more than "
                         f"{_MAX_N} (the exact int64 variance would overflow)")
    sx = np.float32(x.q_scale())
    dims = tuple(range(codes.ndim - k, codes.ndim))
    d = codes.to(_dtype.int64) - int(x.q_zero_point())
    s1 = d.sum(dim=dims, keepdim=True)
    s2 = (d * d).sum(dim=dims, keepdim=True)
    nf = float(np.float32(n))
    # per row: the variance in code units, then in real units, then the root
    v = ((s2 * n - s1 * s1).to(_dtype.float32) / nf) / nf
    var = v * float(sx * sx)  # fl(sx * sx): a float32 product on the host
    r = lucid.sqrt(var + float(np.float32(eps)))
    # per element: the centred code, rounded once, then scaled and normalised
    c = (d * n - s1).to(_dtype.float32) / nf
    y = (c * float(sx)) / r
    if weight is not None:
        y = y * weight.to(y.device)
    if bias is not None:
        y = y + bias.to(y.device)
    return QTensor(quantize(y, float(out_scale), int(out_zero_point), out_dtype), float(out_scale),
                       int(out_zero_point), out_dtype)


class LayerNorm(QuantizedStateMixin, Module):
    """LayerNorm over the trailing ``normalized_shape`` axes of a quantized input, output
    codes with ``scale`` / ``zero_point`` (PyTorch's ``torch.ao.nn.quantized.LayerNorm``
    signature). ``weight`` / ``bias`` are float32 (None without ``elementwise_affine``).

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> from lucid.nn import quantized as nnq
    >>> ln = nnq.LayerNorm(2, None, None, 1.0 / 64, 128, elementwise_affine=False)
    >>> x = Q.quantize_per_tensor(lucid.tensor([[1.0, 3.0]]), 0.5, 0, Q.quint8)
    >>> ln(x).dequantize().tolist()
    [[-1.0, 1.0]]
    """

    _exact_dtype_state = frozenset({"zero_point"})
    _scale_state = frozenset({"scale"})

    def __init__(self, normalized_shape, weight, bias, scale, zero_point, eps=1e-5, elementwise_affine=True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = float(eps)
        if not (np.isfinite(self.eps) and self.eps >= 0):
            raise ValueError(f"quantized LayerNorm: argument 'eps' must be finite and >= 0, got {eps!r}")
        self.elementwise_affine = bool(elementwise_affine)
        if not self.elementwise_affine:
            weight, bias = None, None
        s = float(scale)
        if not (np.isfinite(s) and s > 0):
            raise ValueError(f"quantized LayerNorm: argument 'scale' must be finite and > 0, got {scale!r}")
        self.dtype = as_qdtype(dtype or "quint8")
        zp = int(zero_point)
        if not self.dtype.quant_min <= zp <= self.dtype.quant_max:
            raise ValueError(f"quantized LayerNorm: argument 'zero_point' must lie in [{self.dtype.quant_min}, "
                             f"{self.dtype.quant_max}], got {zero_point!r}")
        self.register_buffer("weight", _affine(weight, self.normalized_shape, "weight"))
        self.register_buffer("bias", _affine(bias, self.normalized_shape, "bias"))
        requant_param_buffers(self, s, zp)
        if device is not None:
            self.to(device)

    def forward(self, x):
        x = as_qtensor(x, "LayerNorm")
        return quantized_layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps, self.scale.item(),
                                    int(self.zero_point.item()), self.dtype)

    @classmethod
    def from_float(cls, mod, module_name="", use_precomputed_fake_quant=False):
        s, z, qd = observer_qparams(mod.activation_post_process, module_name or "LayerNorm")
        dev = mod.weight.device if mod.weight is not None else "cpu"
        return cls(mod.normalized_shape, mod.weight, mod.bias, scale=s, zero_point=z, eps=mod.eps,
                   elementwise_affine=mod.elementwise_affine,
                   dtype=qd).to(dev)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"scale={self.scale.item()}, zero_point={self.zero_point.item()}")

