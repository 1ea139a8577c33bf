"""``scaled_dot_product_attention`` and the multi-head attention forward that
``nn.MultiheadAttention`` uses (PyTorch's packed in-projection layout)."""
from __future__ import annotations

import math

import lucid

from .functional import dropout, linear, softmax


def _causal_keep(l, s, device):
    """(L, S) bool, True where query i may attend key j (``j <= i``, top-left aligned as PyTorch)."""
    return lucid.tril(lucid.ones(l, s, dtype=lucid.bool_, device=device))


def _repeat_heads(t, rep):
    """(..., Hk, S, E) -> (..., Hk * rep, S, E), each head repeated ``rep`` times in place."""
    lead, (hk, s, e) = tuple(t.shape[:-3]), tuple(t.shape[-3:])
    return t.unsqueeze(-3).expand(*lead, hk, rep, s, e).reshape(*lead, hk * rep, s, e)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(q @ k^T * scale + mask) @ v`` over (..., L, E) queries, (..., S, E) keys
    and (..., S, Ev) values; ``scale`` defaults to ``1/sqrt(E)``.

    ``attn_mask``: bool (True = may attend) or float (added to the scores),
    broadcast to (..., L, S). ``is_causal`` masks keys after each query (no
    ``attn_mask`` then). A query that may attend nothing gets NaN, as in PyTorch.

    >>> import lucid
    >>> q = k = v = lucid.ones(1, 2, 4)
    >>> lucid.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).shape
    (1, 2, 4)
    """
    fn = "scaled_dot_product_attention"
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise ValueError(f"{fn}(): expected query, key, value of at least 2 dimensions, got shapes "
                         f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ValueError(f"{fn}(): expected query (..., L, E), key (..., S, E), value (..., S, Ev), got shapes "
                         f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
    if is_causal and attn_mask is not None:
        raise ValueError(f"{fn}(): pass attn_mask or is_causal, not both")
    if enable_gqa and query.ndim >= 3 and query.shape[-3] != key.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = _repeat_heads(key, rep)
        value = _repeat_heads(value, rep)
    l, s = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    scores = lucid.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        attn_mask = _causal_keep(l, s, query.device)
    if attn_mask is not None:
        if attn_mask.dtype.name == "bool":
            scores = lucid.masked_fill(scores, lucid.logical_not(attn_mask), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return lucid.matmul(weights, value)


def multi_head_attention(query, key, value, num_heads, in_proj_weight, in_proj_bias, out_proj_weight,
                         out_proj_bias, key_padding_mask=None, need_weights=True, attn_mask=None,
                         average_attn_weights=True, is_causal=False, dropout_p=0.0, training=True):
    """Batch-first (N, L, E) multi-head attention with a packed (3E, E) in-projection.

    PyTorch's mask conventions: in ``attn_mask`` (L, S) or (N*H, L, S) and
    ``key_padding_mask`` (N, S), a bool True *excludes* the position; float
    masks are added to the scores. Returns (output (N, L, E), weights (N, L, S)
    averaged over heads, or (N, H, L, S), or None).
    """
    fn = "MultiheadAttention"
    n, l, e = query.shape
    s = key.shape[1]
    if e % num_heads:
        raise ValueError(f"{fn}: embed_dim {e} is not divisible by num_heads {num_heads}")
    hd = e // num_heads
    w_q, w_k, w_v = lucid.chunk(in_proj_weight, 3, 0)
    b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else lucid.chunk(in_proj_bias, 3, 0)
    q = linear(query, w_q, b_q).reshape(n, l, num_heads, hd).transpose(1, 2)
    k = linear(key, w_k, b_k).reshape(n, s, num_heads, hd).transpose(1, 2)
    v = linear(value, w_v, b_v).reshape(n, s, num_heads, hd).transpose(1, 2)
    scores = lucid.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))  # (N, H, L, S)
    if is_causal and attn_mask is None:
        attn_mask = lucid.logical_not(_causal_keep(l, s, query.device))
    if attn_mask is not None:
        if attn_mask.ndim == 3:
            attn_mask = attn_mask.reshape(n, num_heads, l, s)
        elif attn_mask.ndim != 2:
            raise ValueError(f"{fn}: attn_mask must be (L, S) or (N*num_heads, L, S), got {tuple(attn_mask.shape)}")
        scores = _apply_mask(scores, attn_mask)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (n, s):
            raise ValueError(f"{fn}: key_padding_mask must have shape {(n, s)}, got {tuple(key_padding_mask.shape)}")
        scores = _apply_mask(scores, key_padding_mask.reshape(n, 1, 1, s))
    weights = softmax(scores, dim=-1)
    attended = dropout(weights, dropout_p, training=training) if dropout_p > 0 else weights
    out = lucid.matmul(attended, v).transpose(1, 2).reshape(n, l, e)
    out = linear(out, out_proj_weight, out_proj_bias)
    if not need_weights:
        return out, None
    return out, (lucid.mean(weights, dim=1) if average_attn_weights else weights)


def _apply_mask(scores, mask):
    if mask.dtype.name == "bool":
        return lucid.masked_fill(scores, mask, float("-inf"))
    return scores + mask


__all__ = ["scaled_dot_product_attention"]
