"""Quantized Linear: ``Q.qmatmul`` over uint8 / int8 activation codes and int8 weights,
exact int32 accumulation, requantized to the output grid (docs/numerics.md)."""
from __future__ import annotations

from ..layers import Linear as _FloatLinear
from ...quantization.primitives import qmatmul
from .. import functional as F
from .checks import as_qtensor, is_float_input
from .weighted_base import WeightedQuantized, _float_parts


class Linear(WeightedQuantized):
    """``Linear(in_features, out_features, bias_=True, dtype=qint8)`` (``bias=`` is accepted too): integer forward
    ``y_q = clamp(rint(acc * M[n]) + z_out)`` with ``acc = Σ (x_q - z_x)(w_q - z_w[n]) + bias_q``
    (``Q.qmatmul``). Input and output are QTensors. Build it with ``from_float`` (or
    ``lucid.quantization.convert``).

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> from lucid.nn import quantized as nnq
    >>> m = nnq.Linear(2, 1)
    >>> m.weight_int8 = lucid.tensor([[2, -1]], dtype=lucid.int8)
    >>> y = m(Q.quantize_per_tensor(lucid.tensor([[3.0, 1.0]]), 1.0, 0, Q.quint8))
    >>> y.int_repr().tolist(), y.dequantize().tolist()
    ([[5]], [[5.0]])
    """

    _FLOAT_MODULE = _FloatLinear

    def __init__(self, in_features, out_features, bias_=True, dtype=None, *, bias=None):
        # ``bias=`` is upstream lucid's (and the float Linear's) name for PyTorch's ``bias_``
        if bias is not None:
            bias_ = bias
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self._init_buffers((self.out_features, self.in_features), bias_)

    def forward(self, x):
        if is_float_input(x):
            if x.shape[-1] != self.in_features:
                raise ValueError(f"{type(self).__name__}.forward(): expected {self.in_features} input features, "
                                 f"got shape {tuple(x.shape)}")
            return self._fake_out(F.linear(x, self._dequantized_weight().to(x.device), self.bias_float))
        x = as_qtensor(x, type(self).__name__)
        if x.shape[-1] != self.in_features:
            raise ValueError(f"{type(self).__name__}.forward(): expected {self.in_features} input features, got "
                             f"shape {tuple(x.shape)}")
        codes = qmatmul(x.int_repr(), x.q_scale(), x.q_zero_point(), self._packed_weight(), self.weight_scale,
                            self.weight_zero_point, bias=self.bias_float, out_scale=self.scale,
                            out_zp=self.zero_point, out_qdtype=self.out_qdtype)
        return self._out(codes)

    @classmethod
    def from_float(cls, mod, module_name=""):
        layer, _ = _float_parts(mod)
        new = cls(layer.in_features, layer.out_features, layer.bias is not None)
        return cls._from_float_common(mod, new, module_name)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale.item()}, "
                f"zero_point={self.zero_point.item()}, qscheme={self.weight_qscheme}")


class LinearReLU(Linear):
    """Quantized Linear followed by ReLU, in one integer kernel call: ReLU is the lower
    clamp bound of the output codes (PyTorch's home for it is nn.intrinsic.quantized,
    which re-exports it)."""

    _relu = True
