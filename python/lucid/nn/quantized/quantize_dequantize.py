"""``Quantize`` (float -> QTensor with fixed qparams) and ``DeQuantize`` (QTensor ->
float), what ``convert`` puts where ``QuantStub`` / ``DeQuantStub`` were."""
from __future__ import annotations

from ...quantization.qdtype import as_qdtype
from ...quantization.qtensor import QTensor, quantize_per_tensor
from ..module import Module
from .checks import QuantizedStateMixin
from .observed_qparams import observer_qparams, requant_param_buffers


class Quantize(QuantizedStateMixin, Module):
    """Float -> QTensor with fixed ``scale`` / ``zero_point`` on grid ``dtype`` (quint8 default).

    >>> import lucid
    >>> from lucid.nn import quantized as nnq
    >>> nnq.Quantize(0.5, 1)(lucid.tensor([0.0, 1.0])).int_repr().tolist()
    [1, 3]
    """

    _exact_dtype_state = frozenset({"zero_point"})
    _scale_state = frozenset({"scale"})

    qdtype = property(lambda self: self.dtype, doc="Upstream lucid's name for ``dtype``.")

    def __init__(self, scale, zero_point, dtype=None, qdtype=None):
        dtype = qdtype if qdtype is not None else dtype  # qdtype: upstream lucid's name
        super().__init__()
        requant_param_buffers(self, scale, zero_point)
        self.dtype = as_qdtype(dtype or "quint8")

    def forward(self, x):
        # a QTensor is already quantized, and an integer input (token ids) is not an activation
        if isinstance(x, QTensor) or not x.dtype.is_floating_point:
            return x
        return quantize_per_tensor(x, self.scale.item(), int(self.zero_point.item()), self.dtype)

    @classmethod
    def from_float(cls, mod, module_name=""):
        app = mod.activation_post_process
        s, z, qd = observer_qparams(app, module_name or type(mod).__name__)
        bufs = list(app.buffers())
        return cls(scale=s, zero_point=z, dtype=qd).to(bufs[0].device if bufs else "cpu")

    def extra_repr(self):
        return f"scale={self.scale.item()}, zero_point={self.zero_point.item()}, dtype={self.dtype!r}"


class DeQuantize(Module):
    """QTensor -> float32 (``QTensor.dequantize``); a float input passes through."""

    def forward(self, x):
        return x.dequantize() if isinstance(x, QTensor) else x

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls()
