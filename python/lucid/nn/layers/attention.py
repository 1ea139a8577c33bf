"""MultiheadAttention with PyTorch's parameter layout, so its state dicts load:
``in_proj_weight`` (3E, E) packing the query, key and value projections,
``in_proj_bias`` (3E,), and ``out_proj`` a Linear(E, E)."""
from __future__ import annotations

import lucid._namespace as lucid

from .. import init
from ..functional.attention import multi_head_attention
from ..module import Module
from ..parameter import Parameter
from ._constructor import check_positive
from .linear import Linear


class MultiheadAttention(Module):
    """``softmax(Q K^T / sqrt(E / H)) V`` in ``num_heads`` heads, then ``out_proj``.

    Inputs are (L, N, E) or, with ``batch_first``, (N, L, E); unbatched (L, E)
    also works. ``forward`` returns ``(output, weights)``, weights (N, L, S)
    averaged over heads when ``need_weights`` (per head with
    ``average_attn_weights=False``), else None. Masks follow PyTorch: a bool
    True in ``attn_mask`` / ``key_padding_mask`` excludes that position, a
    float mask is added to the scores. ``kdim`` / ``vdim`` other than
    ``embed_dim`` give separate ``q/k/v_proj_weight`` parameters (PyTorch's
    names); ``add_bias_kv`` appends a learned key and value to every sequence,
    ``add_zero_attn`` a zero one after the head split (masks are widened with
    "attend").

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
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        check_positive(self.kdim, "MultiheadAttention", "kdim")
        check_positive(self.vdim, "MultiheadAttention", "vdim")
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim

        def param(*shape):
            return Parameter(lucid.zeros(*shape, dtype=dtype, device=device))

        if self._qkv_same_embed_dim:  # PyTorch's layouts, so state dicts load either way
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
        self.in_proj_bias = param(3 * embed_dim) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        # add_bias_kv: one learned key and value appended to every sequence;
        # add_zero_attn: a zero key and value appended after the head split.
        self.bias_k, self.bias_v = (param(1, 1, embed_dim), param(1, 1, embed_dim)) if add_bias_kv else (None, None)
        self.add_zero_attn = bool(add_zero_attn)
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        name = "MultiheadAttention"
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ValueError(f"{name}: expected query, key, value all 2-D (unbatched) or all 3-D, got shapes "
                             f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
        if query.shape[-1] != self.embed_dim or key.shape[-1] != self.kdim or value.shape[-1] != self.vdim:
            raise ValueError(f"{name}: expected query, key, value with last dimensions {self.embed_dim}, {self.kdim}, "
                             f"{self.vdim}, got shapes {tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
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
            self.dropout, self.training, q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, bias_k=self.bias_k, bias_v=self.bias_v, add_zero_attn=self.add_zero_attn)
        if not batched:
            out = out.squeeze(0)
            weights = None if weights is None else weights.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def extra_repr(self):
        s = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"
        if not self._qkv_same_embed_dim:
            s += f", kdim={self.kdim}, vdim={self.vdim}"
        return s


__all__ = ["MultiheadAttention"]
