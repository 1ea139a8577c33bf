"""Quantized eval-mode ``BatchNorm2d``: one lookup table per channel over the input codes."""
from __future__ import annotations

import numpy as np

import lucid._namespace as lucid

from ... import _dtype
from ...quantization.primitives import dequantize, quantize
from ...quantization.qtensor import QTensor
from ..layers import BatchNorm2d as _BN
from .activation import _LookupActivation
from .checks import as_qtensor
from .observed_qparams import observer_qparams


class BatchNorm2d(_LookupActivation):
    """Eval-mode BatchNorm2d on QTensors as one lookup table per channel: ``T[c][q] =
    quantize(bn_c(dequantize(q)))`` with the float BatchNorm computed by lucid's own ops on
    the CPU stream (so the codes equal the fake-quantized float forward bit for bit) and
    the output ``scale`` / ``zero_point`` from the observer. Built by ``from_float``."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, scale=1.0, zero_point=0, dtype=None):
        super().__init__(scale, zero_point, dtype)
        self.num_features = int(num_features)
        self.bn = _BN(self.num_features, eps=eps, momentum=momentum).eval()

    def _float_fn(self, x):
        return self.bn.to(x.device)(x)

    def _table(self, x):
        key = (x.q_scale(), x.q_zero_point(), x.dtype.name, self.scale.item(), int(self.zero_point.item()),
               self.dtype.name, x.device.type, "bn")
        t = self._tables.get(key)
        if t is None:
            qd = x.dtype
            n = qd.quant_max - qd.quant_min + 1
            codes = lucid.tensor(np.arange(qd.quant_min, qd.quant_max + 1), dtype=qd.storage)
            real = dequantize(codes, x.q_scale(), x.q_zero_point())  # (n,)
            grid = real.reshape(1, 1, n, 1).expand(1, self.num_features, n, 1).contiguous()
            bn = self.bn.to("cpu")
            with lucid.no_grad():
                out = quantize(bn(grid), self.scale.item(), int(self.zero_point.item()), self.dtype)
            t = self._tables[key] = out.reshape(-1).to(x.device)  # channel-major: index c * n + code
        return t

    def forward(self, x):
        if not isinstance(x, QTensor):
            return self.bn.to(x.device)(x)
        x = as_qtensor(x, "BatchNorm2d")
        c = x.int_repr()
        if c.ndim != 4 or c.shape[1] != self.num_features:
            raise ValueError(f"BatchNorm2d.forward(): expected (N, {self.num_features}, H, W), got {tuple(c.shape)}")
        qd = x.dtype
        n = qd.quant_max - qd.quant_min + 1
        offsets = lucid.arange(self.num_features, device=c.device).to(_dtype.int64).reshape(1, -1, 1, 1) * n
        idx = (c.to(_dtype.int64) - qd.quant_min + offsets).reshape(-1)
        out = lucid.index_select(self._table(x), 0, idx).reshape(c.shape)
        return QTensor(out, self.scale.item(), int(self.zero_point.item()), self.dtype)

    @classmethod
    def from_float(cls, mod, module_name=""):
        s, z, qd = observer_qparams(mod.activation_post_process, module_name or "BatchNorm2d")
        new = cls(mod.num_features, eps=mod.eps, momentum=mod.momentum, scale=s, zero_point=z, dtype=qd)
        new.bn.load_state_dict({k: v for k, v in mod.state_dict().items() if not k.startswith("activation")})
        return new.to(mod.running_mean.device if mod.running_mean is not None else "cpu")

    def extra_repr(self):
        return f"{self.num_features}, scale={self.scale.item()}, zero_point={self.zero_point.item()}"
