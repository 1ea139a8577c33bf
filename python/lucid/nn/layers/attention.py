"""MultiheadAttention with PyTorch's parameter layout, so its state dicts load:
``in_proj_weight`` (3E, E) packing the query, key and value projections,
``in_proj_bias`` (3E,), and ``out_proj`` a Linear(E, E)."""
from __future__ import annotations

import lucid

from .. import init
from .._f_attention import multi_head_attention
from ..module import Module
from ..parameter import Parameter
from ._factory import check_positive
from .linear import Linear


class MultiheadAttention(Module):
    """``softmax(Q K^T / sqrt(E / H)) V`` in ``num_heads`` heads, then ``out_proj``.

    Inputs are (L, N, E) or, with ``batch_first``, (N, L, E); unbatched (L, E)
    also works. ``forward`` returns ``(output, weights)``, weights (N, L, S)
    averaged over heads when ``need_weights`` (per head with
    ``average_attn_weights=False``), else None. Masks follow PyTorch: a bool
    True in ``attn_mask`` / ``key_padding_mask`` excludes that position, a
    float mask is added to the scores. Only ``kdim = vdim = embed_dim``
    without ``add_bias_kv`` / ``add_zero_attn`` is implemented.

    >>> import lucid
    >>> mha = lucid.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> out, w = mha(lucid.ones(1, 3, 8), lucid.ones(1, 3, 8), lucid.ones(1, 3, 8))
    >>> out.shape, w.shape
    ((1, 3, 8), (1, 3, 3))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        check_positive(embed_dim, "MultiheadAttention", "embed_dim")
        check_positive(num_heads, "MultiheadAttention", "num_heads")
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads})")
        if (kdim not in (None, embed_dim)) or (vdim not in (None, embed_dim)) or add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: kdim/vdim different from embed_dim, add_bias_kv and "
                                      "add_zero_attn are not implemented")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        self.kdim = self.vdim = embed_dim
        self._qkv_same_embed_dim = True
        self.in_proj_weight = Parameter(lucid.zeros(3 * embed_dim, embed_dim, dtype=dtype, device=device))
        self.in_proj_bias = Parameter(lucid.zeros(3 * embed_dim, dtype=dtype, device=device)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self):
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        name = "MultiheadAttention"
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ValueError(f"{name}: expected query, key, value all 2-D (unbatched) or all 3-D, got shapes "
                             f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
        if query.shape[-1] != self.embed_dim or key.shape[-1] != self.embed_dim or value.shape[-1] != self.embed_dim:
            raise ValueError(f"{name}: expected inputs with last dimension {self.embed_dim}, got shapes "
                             f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
        batched = query.ndim == 3
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        out, weights = multi_head_attention(
            query, key, value, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
            self.out_proj.bias, key_padding_mask, need_weights, attn_mask, average_attn_weights, is_causal,
            self.dropout, self.training)
        if not batched:
            out = out.squeeze(0)
            weights = None if weights is None else weights.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def extra_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"
