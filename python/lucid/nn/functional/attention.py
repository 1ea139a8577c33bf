"""``scaled_dot_product_attention`` and the multi-head attention forward that
``nn.MultiheadAttention`` uses (PyTorch's packed in-projection layout)."""
from __future__ import annotations

import math

import lucid._namespace as lucid

from ..._ops.nn import linear
from .activation import softmax
from .dropouts import dropout


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
                         average_attn_weights=True, is_causal=False, dropout_p=0.0, training=True,
                         q_proj_weight=None, k_proj_weight=None, v_proj_weight=None, bias_k=None, bias_v=None,
                         add_zero_attn=False):
    """Batch-first multi-head attention: query (N, L, E), key (N, S, kdim), value (N, S, vdim).

    The in-projection is the packed (3E, E) ``in_proj_weight``, or (kdim / vdim other
    than E) ``q/k/v_proj_weight`` with the packed bias. PyTorch's mask conventions: in
    ``attn_mask`` (L, S) or (N*H, L, S) and ``key_padding_mask`` (N, S), a bool True
    *excludes* the position; float masks are added to the scores. ``bias_k`` / ``bias_v``
    (1, 1, E) append one key / value to every sequence after the projection and
    ``add_zero_attn`` a zero one per head; each widens the masks by one "attend"
    column, as PyTorch. Returns (output (N, L, E), weights (N, L, S') averaged over
    heads, or (N, H, L, S'), or None).
    """
    fn = "MultiheadAttention"
    n, l, e = query.shape
    s = key.shape[1]
    if e % num_heads:
        raise ValueError(f"{fn}: embed_dim {e} is not divisible by num_heads {num_heads}")
    hd = e // num_heads
    if in_proj_weight is not None:
        w_q, w_k, w_v = lucid.chunk(in_proj_weight, 3, 0)
    else:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else lucid.chunk(in_proj_bias, 3, 0)
    q = linear(query, w_q, b_q).reshape(n, l, num_heads, hd).transpose(1, 2)
    k, v = linear(key, w_k, b_k), linear(value, w_v, b_v)  # (N, S, E)
    if is_causal and attn_mask is None:
        attn_mask = lucid.logical_not(_causal_keep(l, s, query.device))
    if attn_mask is not None:
        if attn_mask.ndim == 3:
            attn_mask = attn_mask.reshape(n, num_heads, l, s)
        elif attn_mask.ndim != 2:
            raise ValueError(f"{fn}: attn_mask must be (L, S) or (N*num_heads, L, S), got {tuple(attn_mask.shape)}")
    if key_padding_mask is not None and tuple(key_padding_mask.shape) != (n, s):
        raise ValueError(f"{fn}: key_padding_mask must have shape {(n, s)}, got {tuple(key_padding_mask.shape)}")
    if bias_k is not None:
        k = lucid.cat([k, bias_k.expand(n, 1, e)], dim=1)
        v = lucid.cat([v, bias_v.expand(n, 1, e)], dim=1)
        attn_mask, key_padding_mask = _widen(attn_mask), _widen(key_padding_mask)
    k = k.reshape(n, k.shape[1], num_heads, hd).transpose(1, 2)  # (N, H, S', hd)
    v = v.reshape(n, v.shape[1], num_heads, hd).transpose(1, 2)
    if add_zero_attn:
        zeros = lucid.zeros(n, num_heads, 1, hd, dtype=k.dtype, device=k.device)
        k, v = lucid.cat([k, zeros], dim=2), lucid.cat([v, zeros], dim=2)
        attn_mask, key_padding_mask = _widen(attn_mask), _widen(key_padding_mask)
    scores = lucid.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))  # (N, H, L, S')
    if attn_mask is not None:
        scores = _apply_mask(scores, attn_mask)
    if key_padding_mask is not None:
        scores = _apply_mask(scores, key_padding_mask.reshape(n, 1, 1, key_padding_mask.shape[-1]))
    weights = softmax(scores, dim=-1)
    attended = dropout(weights, dropout_p, training=training) if dropout_p > 0 else weights
    out = lucid.matmul(attended, v).transpose(1, 2).reshape(n, l, e)
    out = linear(out, out_proj_weight, out_proj_bias)
    if not need_weights:
        return out, None
    return out, (lucid.mean(weights, dim=1) if average_attn_weights else weights)


def _widen(mask):
    """A mask with one more key column that excludes nothing (False / 0.0), or None."""
    if mask is None:
        return None
    extra = lucid.zeros(*mask.shape[:-1], 1, dtype=mask.dtype, device=mask.device)
    return lucid.cat([mask, extra], dim=-1)


def _apply_mask(scores, mask):
    if mask.dtype.name == "bool":
        return lucid.masked_fill(scores, mask, float("-inf"))
    return scores + mask


__all__ = ["scaled_dot_product_attention"]
