"""Quantize / DeQuantize and the modules that work on quantized activations without
weights: ReLU, ReLU6, lookup-table activations, pooling, Flatten, Dropout.

Lookup-table activations (Hardswish, Hardsigmoid, Sigmoid, Tanh, LeakyReLU, ELU) map
each of the 256 input codes once: the table is ``quantize(f(dequantize(c)))`` with
``f`` evaluated by lucid's own float op on the CPU stream, then applied to the codes by
indexing. Both streams use the same table, so their codes are identical, and for the
piecewise-linear functions (correctly rounded elementwise ops) the table equals the
fake-quantized float forward exactly.
"""
from __future__ import annotations

import numpy as np

import lucid

from ... import _dtype
from ..._creation import tensor
from ..module import Module
from .. import functional as F
from ._common import Q, QuantizedStateMixin, as_qtensor, observer_qparams, requant_param_buffers


def _is_q(x):
    return isinstance(x, Q().QTensor)


class Quantize(QuantizedStateMixin, Module):
    """Float -> QTensor with fixed ``scale`` / ``zero_point`` on grid ``dtype`` (quint8 default).

    >>> import lucid
    >>> from lucid.nn import quantized as nnq
    >>> nnq.Quantize(0.5, 1)(lucid.tensor([0.0, 1.0])).int_repr().tolist()
    [1, 3]
    """

    _exact_dtype_state = frozenset({"zero_point"})
    _scale_state = frozenset({"scale"})

    def __init__(self, scale, zero_point, dtype=None):
        super().__init__()
        requant_param_buffers(self, scale, zero_point)
        self.dtype = Q().as_qdtype(dtype or "quint8")

    def forward(self, x):
        if _is_q(x):
            return x
        return Q().quantize_per_tensor(x, self.scale.item(), int(self.zero_point.item()), self.dtype)

    @classmethod
    def from_float(cls, mod, module_name=""):
        app = mod.activation_post_process
        s, z, qd = observer_qparams(app, module_name or type(mod).__name__)
        bufs = list(app.buffers())
        return cls(s, z, qd).to(bufs[0].device if bufs else "cpu")

    def extra_repr(self):
        return f"scale={self.scale.item()}, zero_point={self.zero_point.item()}, dtype={self.dtype!r}"


class DeQuantize(Module):
    """QTensor -> float32 (``QTensor.dequantize``); a float input passes through."""

    def forward(self, x):
        return x.dequantize() if _is_q(x) else x

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls()


class ReLU(Module):
    """``max(code, zero_point)`` (real 0 is the zero-point code); the qparams are kept.
    A float input gets the float ReLU."""

    def __init__(self, inplace=False):
        super().__init__()

    def forward(self, x):
        if not _is_q(x):
            return F.relu(x)
        c = x.int_repr()
        return x._same_params(lucid.maximum(c, lucid.full((), x.q_zero_point(), dtype=c.dtype, device=c.device)))

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

    def forward(self, x):
        if not _is_q(x):
            return F.relu6(x)
        hi = _code_of(6.0, x.q_scale(), x.q_zero_point(), x.dtype)
        return x._same_params(lucid.clamp(x.int_repr(), x.q_zero_point(), hi))

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls()


class _LookupActivation(QuantizedStateMixin, Module):
    """Output codes ``table[input code]``; the table is built per input qparams and cached."""

    _exact_dtype_state = frozenset({"zero_point"})
    _scale_state = frozenset({"scale"})
    _fixed = None  # (scale, zero_point) of fixed-range outputs

    def __init__(self, scale=None, zero_point=None, dtype=None):
        super().__init__()
        if scale is None:
            scale, zero_point = self._fixed
        requant_param_buffers(self, scale, zero_point)
        self.dtype = Q().as_qdtype(dtype or "quint8")
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
            real = Q().dequantize(codes, x.q_scale(), x.q_zero_point())
            out = Q().quantize(self._float_fn(real), self.scale.item(), int(self.zero_point.item()), self.dtype)
            t = self._tables[key] = out.to(x.device)
        return t

    def forward(self, x):
        if not _is_q(x):
            return self._float_fn(x)
        x = as_qtensor(x, type(self).__name__)
        c = x.int_repr()
        idx = c.reshape(-1).to(_dtype.int64)
        if x.dtype.signed:
            idx = idx - x.dtype.quant_min
        out = lucid.index_select(self._table(x), 0, idx).reshape(c.shape)
        return Q().QTensor(out, self.scale.item(), int(self.zero_point.item()), self.dtype)

    @classmethod
    def from_float(cls, mod, module_name=""):
        if cls._fixed is not None and getattr(mod, "activation_post_process", None) is None:
            new = cls()
        else:
            s, z, qd = observer_qparams(mod.activation_post_process, module_name or type(mod).__name__)
            new = cls(s, z, qd)
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
    def __init__(self, scale=None, zero_point=None, negative_slope=0.01, dtype=None):
        super().__init__(scale, zero_point, dtype)
        self.negative_slope = negative_slope

    def _float_fn(self, x):
        return F.leaky_relu(x, self.negative_slope)


class ELU(_LookupActivation):
    def __init__(self, scale=None, zero_point=None, alpha=1.0, dtype=None):
        super().__init__(scale, zero_point, dtype)
        self.alpha = alpha

    def _float_fn(self, x):
        return lucid.where(x > 0, x, (lucid.exp(x) - 1.0) * self.alpha)


class MaxPool2d(Module):
    """Max pooling of the codes (exact: max commutes with the monotone dequantization);
    the qparams are kept. Arguments as ``nn.MaxPool2d``."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.ceil_mode = dilation, ceil_mode

    def forward(self, x):
        def pool(t):
            return F.max_pool2d(t, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)

        if not _is_q(x):
            return pool(x)
        return x._same_params(Q().qmax_pool2d(x.int_repr(), self.kernel_size, self.stride, self.padding,
                                               self.dilation, self.ceil_mode))

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls(mod.kernel_size, mod.stride, mod.padding, mod.dilation, mod.ceil_mode)


class AdaptiveAvgPool2d(Module):
    """Mean of the codes over PyTorch's adaptive bins, ``rint(fl(Σ codes / n))`` (ties to
    even; the sums are exact integers in float32); the qparams are kept."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        if not _is_q(x):
            return F.adaptive_avg_pool2d(x, self.output_size)
        c = x.int_repr()
        if c.ndim not in (3, 4):
            raise ValueError(f"AdaptiveAvgPool2d.forward(): expected a 3-D or 4-D input, got shape {tuple(c.shape)}")
        h, w = c.shape[-2], c.shape[-1]
        os_ = self.output_size
        oh, ow = (os_, os_) if isinstance(os_, int) else os_
        oh, ow = oh or h, ow or w
        cf = c.to(_dtype.float32)
        rows = []
        for i in range(oh):
            h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
            cols = []
            for j in range(ow):
                w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
                s = cf[..., h0:h1, w0:w1].sum(dim=(-2, -1))
                cols.append(lucid.round(s / float((h1 - h0) * (w1 - w0))))
            rows.append(lucid.stack(cols, dim=-1))
        out = lucid.stack(rows, dim=-2)
        return x._same_params(out.to(c.dtype))

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls(mod.output_size)


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls(mod.start_dim, mod.end_dim)


class Dropout(Module):
    """Identity (quantized models run in inference)."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = p

    def forward(self, x):
        return x

    @classmethod
    def from_float(cls, mod, module_name=""):
        return cls(mod.p)


class BatchNorm2d(_LookupActivation):
    """Eval-mode BatchNorm2d on QTensors as one lookup table per channel: ``T[c][q] =
    quantize(bn_c(dequantize(q)))`` with the float BatchNorm computed by lucid's own ops on
    the CPU stream (so the codes equal the fake-quantized float forward bit for bit) and
    the output ``scale`` / ``zero_point`` from the observer. Built by ``from_float``."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, scale=1.0, zero_point=0, dtype=None):
        super().__init__(scale, zero_point, dtype)
        from ..layers import BatchNorm2d as _BN

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
            real = Q().dequantize(codes, x.q_scale(), x.q_zero_point())  # (n,)
            grid = real.reshape(1, 1, n, 1).expand(1, self.num_features, n, 1).contiguous()
            bn = self.bn.to("cpu")
            with lucid.no_grad():
                out = Q().quantize(bn(grid), self.scale.item(), int(self.zero_point.item()), self.dtype)
            t = self._tables[key] = out.reshape(-1).to(x.device)  # channel-major: index c * n + code
        return t

    def forward(self, x):
        if not _is_q(x):
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
        return Q().QTensor(out, self.scale.item(), int(self.zero_point.item()), self.dtype)

    @classmethod
    def from_float(cls, mod, module_name=""):
        s, z, qd = observer_qparams(mod.activation_post_process, module_name or "BatchNorm2d")
        new = cls(mod.num_features, mod.eps, mod.momentum, s, z, qd)
        new.bn.load_state_dict({k: v for k, v in mod.state_dict().items() if not k.startswith("activation")})
        return new.to(mod.running_mean.device if mod.running_mean is not None else "cpu")

    def extra_repr(self):
        return f"{self.num_features}, scale={self.scale.item()}, zero_point={self.zero_point.item()}"
