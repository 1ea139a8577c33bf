"""Quantized EmbeddingBag (sum / mean): the int8 rows of ``nn.quantized.Embedding``
(one affine (scale, zero point) per row, qint8), looked up, dequantized exactly, and
reduced per bag in a fixed order so both streams give the same bits.

PyTorch's quantized EmbeddingBag stores rows as quint8 with a *float* scale and bias
per row (its "8-bit rowwise" format); lucid keeps the per-row affine qint8 scheme of
its Embedding instead (docs/numerics.md, "EmbeddingBag"). lucid has no float
``nn.EmbeddingBag``: ``from_float`` takes an ``nn.Embedding`` (and a ``mode``)."""
from __future__ import annotations

import numpy as np

import lucid._namespace as lucid

from ... import _dtype
from ..._creation import tensor, zeros
from .embedding import Embedding


class EmbeddingBag(Embedding):
    """``EmbeddingBag(num_embeddings, embedding_dim, mode="sum" | "mean", include_last_offset=False)``.

    ``forward(input, offsets=None, per_sample_weights=None)`` as ``nn.EmbeddingBag``:
    a 2-D ``input`` (B, L) is B bags of L indices; a 1-D ``input`` needs ``offsets``
    (bag starts; ``offsets[0] == 0``, non-decreasing; with ``include_last_offset`` the
    last entry ends the last bag). Output (B, embedding_dim) float32: per bag,
    ``acc = 0; acc = fl(acc + r_j)`` over its rows in order (``r_j`` the dequantized row,
    times its per-sample weight in "sum" mode), then ``fl(acc / n)`` for "mean"; an
    empty bag gives zeros.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> from lucid import nn
    >>> emb = nn.Embedding(10, 4)
    >>> emb.qconfig = Q.default_per_channel_qconfig
    >>> bag = nn.quantized.EmbeddingBag.from_float(emb, mode="mean")
    >>> bag(lucid.tensor([1, 2, 7]), offsets=lucid.tensor([0, 2])).shape
    (2, 4)
    """

    _FLOAT_MODULE = None  # no float nn.EmbeddingBag in lucid: not in the conversion mappings

    def __init__(self, num_embeddings, embedding_dim, mode="sum", include_last_offset=False, padding_idx=None):
        if mode not in ("sum", "mean"):
            raise NotImplementedError(f"quantized EmbeddingBag: mode must be 'sum' or 'mean', got {mode!r} "
                                      "('max' is not implemented)")
        if padding_idx is not None:
            raise NotImplementedError("quantized EmbeddingBag: padding_idx is not implemented")
        super().__init__(num_embeddings, embedding_dim)
        self.mode, self.include_last_offset = mode, bool(include_last_offset)

    def _bags(self, input, offsets):
        """(flat int64 indices, (B, L) positions into them, (B, L) validity or None, bag sizes)."""
        name = "quantized EmbeddingBag.forward()"
        if not isinstance(input, lucid.Tensor) or input.dtype.is_floating_point:
            raise TypeError(f"{name}: expected an integer lucid.Tensor 'input', got "
                            f"{getattr(input, 'dtype', type(input).__name__)!r}")
        if input.ndim == 2:
            if offsets is not None:
                raise ValueError(f"{name}: 'offsets' must be None for a 2-D input (each row is a bag)")
            b, length = input.shape
            pos = np.arange(b * length, dtype=np.int64).reshape(b, length)
            return input.reshape(-1), pos, None, np.full(b, length, np.int64)
        if input.ndim != 1:
            raise ValueError(f"{name}: expected a 1-D input with offsets or a 2-D input, got shape "
                             f"{tuple(input.shape)}")
        if not isinstance(offsets, lucid.Tensor) or offsets.dtype.is_floating_point or offsets.ndim != 1:
            raise TypeError(f"{name}: a 1-D input needs 'offsets', a 1-D integer lucid.Tensor, got "
                            f"{getattr(offsets, 'dtype', type(offsets).__name__)!r}")
        n = input.shape[0]
        o = offsets.to("cpu").numpy().astype(np.int64)
        if o.size == 0 or o[0] != 0 or (np.diff(o) < 0).any() or o[-1] > n:
            raise ValueError(f"{name}: 'offsets' must start at 0, be non-decreasing and stay within the "
                             f"input's length {n}, got {o.tolist()}")
        if self.include_last_offset:
            if o.size < 2:
                raise ValueError(f"{name}: with include_last_offset, 'offsets' needs at least 2 entries")
            starts, ends = o[:-1], o[1:]
        else:
            starts, ends = o, np.append(o[1:], n)
        sizes = ends - starts
        width = int(sizes.max(initial=0))
        steps = np.arange(width, dtype=np.int64)
        valid = steps[None, :] < sizes[:, None]
        pos = np.where(valid, starts[:, None] + steps[None, :], 0)
        return input, pos, valid, sizes

    def forward(self, input, offsets=None, per_sample_weights=None):
        flat, pos, valid, sizes = self._bags(input, offsets)
        dev = self.weight_int8.device
        b, width = pos.shape
        if per_sample_weights is not None:
            if self.mode != "sum":
                raise NotImplementedError("quantized EmbeddingBag.forward(): per_sample_weights only with mode='sum'"
                                          f", got mode={self.mode!r}")
            if not isinstance(per_sample_weights, lucid.Tensor) or tuple(per_sample_weights.shape) != tuple(
                    input.shape):
                raise ValueError("quantized EmbeddingBag.forward(): 'per_sample_weights' must be a tensor shaped "
                                 f"like the input {tuple(input.shape)}")
        acc = zeros((b, self.embedding_dim), dtype=_dtype.float32, device=dev)
        if flat.numel() == 0 or width == 0:
            return acc
        rows = super().forward(flat)  # (n, D) float32, exact per-row dequantization; checks the indices
        if per_sample_weights is not None:
            rows = rows * per_sample_weights.reshape(-1, 1).to(device=dev, dtype=_dtype.float32)
        pos_t = tensor(pos, device=dev)
        valid_t = None if valid is None else tensor(valid, device=dev)
        zero = lucid.zeros((), dtype=_dtype.float32, device=dev)
        for j in range(width):  # a fixed order of float additions: the same bits on both streams
            r = lucid.index_select(rows, 0, pos_t[:, j])
            if valid is not None and not valid[:, j].all():
                r = lucid.where(valid_t[:, j].reshape(-1, 1), r, zero)
            acc = acc + r
        if self.mode == "mean":
            acc = acc / tensor(np.maximum(sizes, 1).astype(np.float32).reshape(-1, 1), device=dev)
        return acc

    @classmethod
    def from_float(cls, mod, module_name="", mode=None, include_last_offset=None):
        """From a float ``nn.EmbeddingBag``, ``nn.Embedding`` or ``nn.qat.Embedding`` (its qconfig's
        weight observer, else per-row symmetric qint8). ``mode`` / ``include_last_offset``
        default to the float module's (an ``nn.Embedding``: "sum", False)."""
        emb = Embedding.from_float(mod, module_name=module_name or "EmbeddingBag")
        mode = getattr(mod, "mode", "sum") if mode is None else mode
        if include_last_offset is None:
            include_last_offset = getattr(mod, "include_last_offset", False)
        new = cls(emb.num_embeddings, emb.embedding_dim, mode=mode, include_last_offset=include_last_offset,
                  padding_idx=emb.padding_idx)
        new.weight_int8, new.weight_scale, new.weight_zero_point = emb.weight_int8, emb.weight_scale, \
            emb.weight_zero_point
        return new.to(emb.weight_int8.device)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}, dtype=qint8"
