"""Quantized Embedding: int8 rows with one (scale, zero point) per row (the weight
observer of the qconfig; a per-tensor one is stored replicated). A lookup gathers the
codes and their row parameters and dequantizes them (exact, elementwise): float32 out,
bit-identical on both streams. Integer indices in, as ``nn.Embedding``."""
from __future__ import annotations

import lucid._namespace as lucid

from ... import _dtype
from ..._creation import zeros
from ..layers import Embedding as _FloatEmbedding
from ..module import Module
from ...quantization.primitives import dequantize
from ...quantization.observer import PerChannelMinMaxObserver
from ...quantization.qdtype import per_channel_symmetric, qint8
from ...quantization.qtensor import QTensor
from .checks import QuantizedStateMixin
from .observed_qparams import quantize_weight


class Embedding(QuantizedStateMixin, Module):
    """``Embedding(num_embeddings, embedding_dim, padding_idx=None)`` with ``weight_int8``
    (int8), ``weight_scale`` (float32, per row) and ``weight_zero_point`` (int32, per row).

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> from lucid import nn
    >>> emb = nn.Embedding(10, 4)
    >>> emb.qconfig = Q.default_per_channel_qconfig
    >>> q = lucid.nn.quantized.Embedding.from_float(emb)
    >>> q(lucid.tensor([[1, 2]])).shape
    (1, 2, 4)
    """

    _FLOAT_MODULE = _FloatEmbedding
    _exact_dtype_state = frozenset({"weight_int8", "weight_zero_point"})
    _scale_state = frozenset({"weight_scale"})

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.padding_idx = int(num_embeddings), int(embedding_dim), padding_idx
        self.register_buffer("weight_int8", zeros((self.num_embeddings, self.embedding_dim), dtype=_dtype.int8))
        self.register_buffer("weight_scale", lucid.ones(self.num_embeddings, dtype=_dtype.float32))
        self.register_buffer("weight_zero_point", zeros(self.num_embeddings, dtype=_dtype.int32))

    def weight(self):
        return QTensor(self.weight_int8, self.weight_scale, self.weight_zero_point, qint8, axis=0)

    def forward(self, indices):
        if not isinstance(indices, lucid.Tensor) or indices.dtype.is_floating_point:
            raise TypeError(f"quantized Embedding.forward(): expected an integer lucid.Tensor of indices, got "
                            f"{getattr(indices, 'dtype', type(indices).__name__)!r}")
        flat = indices.reshape(-1).to(_dtype.int64)
        n = self.num_embeddings
        if flat.numel() and (int(lucid.amin(flat).item()) < 0 or int(lucid.amax(flat).item()) >= n):
            raise IndexError(f"quantized Embedding.forward(): indices must lie in [0, {n})")
        rows = lucid.index_select(self.weight_int8, 0, flat)
        s = lucid.index_select(self.weight_scale, 0, flat)
        z = lucid.index_select(self.weight_zero_point, 0, flat)
        out = dequantize(rows, s, z, ch_axis=0) if flat.numel() else rows.to(_dtype.float32)
        return out.reshape(tuple(indices.shape) + (self.embedding_dim,))

    @classmethod
    def from_float(cls, mod, module_name=""):
        wobs = getattr(mod, "weight_fake_quant", None)
        if wobs is None:
            qconfig = getattr(mod, "qconfig", None)
            if qconfig is not None and qconfig.weight is None:
                raise ValueError(f"Embedding.from_float(): the qconfig of '{module_name or 'Embedding'}' has no "
                                 "weight observer")
            # Without a qconfig, upstream lucid's default: per-row symmetric qint8 weights.
            wobs = qconfig.weight() if qconfig is not None else \
                PerChannelMinMaxObserver(ch_axis=0, dtype=qint8, qscheme=per_channel_symmetric)
            wobs.to(mod.weight.device)
            wobs(mod.weight.detach())
        new = cls(mod.num_embeddings, mod.embedding_dim, padding_idx=mod.padding_idx)
        codes, s, z, _ = quantize_weight(mod.weight, wobs, module_name or "Embedding")
        new.weight_int8, new.weight_scale, new.weight_zero_point = codes, s, z
        return new.to(mod.weight.device)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}, dtype=qint8"
