"""The transformer layers: TransformerEncoderLayer, TransformerEncoder,
TransformerDecoderLayer, TransformerDecoder and Transformer, with PyTorch's
submodule names (``self_attn``, ``multihead_attn``, ``linear1``, ``linear2``,
``norm1..3``, ``dropout``, ``dropout1..3``; ``layers.{i}``; ``encoder`` /
``decoder`` each with a final ``norm``), so state dicts load.

Breadth over the nn core: built from its layers (MultiheadAttention, Linear,
LayerNorm, Dropout); nothing in the core imports this module, and ``lucid.nn``
re-exports its names."""
from __future__ import annotations

import copy

import lucid._namespace as lucid

from . import functional as F
from . import init
from .containers import ModuleList
from .layers.attention import MultiheadAttention
from .layers.dropout import Dropout
from .layers.linear import Linear
from .layers.normalization import LayerNorm
from .module import Module


_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual and LayerNorm
    (after each block, or before with ``norm_first``); ``activation`` is
    ``"relu"``, ``"gelu"`` or a callable.

    >>> import lucid
    >>> layer = lucid.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    >>> layer(lucid.ones(2, 5, 8)).shape
    (2, 5, 8)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise ValueError(f"TransformerEncoderLayer: activation should be 'relu' or 'gelu', not {activation!r}")
            activation = _ACTIVATIONS[activation]
        self.activation = activation

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` applied in turn, then ``norm`` if given."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        if not isinstance(encoder_layer, Module):  # checked before num_layers copies are made
            raise TypeError(f"TransformerEncoder: argument 'encoder_layer' must be a Module, "
                            f"got {type(encoder_layer).__name__}")
        if not isinstance(num_layers, int) or isinstance(num_layers, bool) or num_layers < 0:
            raise ValueError(f"TransformerEncoder: argument 'num_layers' must be a non-negative int, got {num_layers!r}")
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


def _activation(activation, cls):
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise ValueError(f"{cls}: argument 'activation' should be 'relu' or 'gelu', not {activation!r}")
        return _ACTIVATIONS[activation]
    if not callable(activation):
        raise TypeError(f"{cls}: argument 'activation' must be 'relu', 'gelu' or a callable, "
                        f"got {type(activation).__name__}")
    return activation


class TransformerDecoderLayer(Module):
    """Self-attention on ``tgt``, attention from ``tgt`` to ``memory``, then a
    feed-forward block, each with a residual and LayerNorm (after each block, or
    before with ``norm_first``). Masks follow MultiheadAttention (bool True =
    excluded, float = added); ``tgt_is_causal`` without ``tgt_mask`` masks later
    target positions.

    >>> import lucid
    >>> layer = lucid.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    >>> layer(lucid.ones(2, 5, 8), lucid.ones(2, 3, 8)).shape
    (2, 5, 8)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        activation = _activation(activation, "TransformerDecoderLayer")
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                                 **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = activation

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        if tgt.ndim != memory.ndim:
            raise ValueError(f"TransformerDecoderLayer: tgt and memory must both be batched (3-D) or both "
                             f"unbatched (2-D), got shapes {tuple(tgt.shape)} and {tuple(memory.shape)}")
        x = tgt
        tgt_is_causal, memory_is_causal = bool(tgt_is_causal), bool(memory_is_causal)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x


def _check_stack_args(layer, num_layers, cls, arg):
    if not isinstance(layer, Module):  # checked before num_layers copies are made
        raise TypeError(f"{cls}: argument '{arg}' must be a Module, got {type(layer).__name__}")
    if not isinstance(num_layers, int) or isinstance(num_layers, bool) or num_layers < 0:
        raise ValueError(f"{cls}: argument 'num_layers' must be a non-negative int, got {num_layers!r}")


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` applied in turn (each attending
    to the same ``memory``), then ``norm`` if given."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        _check_stack_args(decoder_layer, num_layers, "TransformerDecoder", "decoder_layer")
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        # tgt_is_causal=None: a hint only; the mask, when given, decides the result either way.
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                      memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """An encoder (``num_encoder_layers`` TransformerEncoderLayers and a LayerNorm) and a
    decoder (``num_decoder_layers`` TransformerDecoderLayers and a LayerNorm), or the
    given ``custom_encoder`` / ``custom_decoder``. Every parameter of more than one
    dimension is re-initialised with ``xavier_uniform_``, as PyTorch.
    ``forward(src, tgt, ...)`` returns the decoder's output for ``tgt`` attending to the
    encoded ``src``.

    >>> import lucid
    >>> m = lucid.nn.Transformer(8, 2, 1, 1, dim_feedforward=16, dropout=0.0, batch_first=True)
    >>> m(lucid.ones(2, 4, 8), lucid.ones(2, 3, 8)).shape
    (2, 3, 8)
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        layer_kw = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                        layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first, bias=bias, **kw)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(d_model, nhead, **layer_kw), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(d_model, nhead, **layer_kw), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def _reset_parameters(self):
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batch_axis = 0 if self.batch_first else 1
        if src.ndim != tgt.ndim or src.ndim not in (2, 3):
            raise ValueError(f"Transformer: src and tgt must both be batched (3-D) or both unbatched (2-D), got "
                             f"shapes {tuple(src.shape)} and {tuple(tgt.shape)}")
        if src.ndim == 3 and src.shape[batch_axis] != tgt.shape[batch_axis]:
            raise ValueError(f"Transformer: the batch number of src and tgt must be equal (axis {batch_axis}), got "
                             f"shapes {tuple(src.shape)} and {tuple(tgt.shape)}")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(f"Transformer: the feature number of src and tgt must be equal to d_model "
                             f"({self.d_model}), got shapes {tuple(src.shape)} and {tuple(tgt.shape)}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """An (sz, sz) float mask: -inf above the diagonal (later positions excluded), 0 elsewhere.

        >>> import lucid
        >>> lucid.nn.Transformer.generate_square_subsequent_mask(2).tolist()
        [[0.0, -inf], [0.0, 0.0]]
        """
        if not isinstance(sz, int) or isinstance(sz, bool) or sz < 0:
            raise ValueError(f"generate_square_subsequent_mask(): argument 'sz' must be a non-negative int, "
                             f"got {sz!r}")
        full = lucid.full((sz, sz), float("-inf"), dtype=lucid.float32 if dtype is None else dtype, device=device)
        return lucid.triu(full, 1)


__all__ = ["TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer", "TransformerDecoder",
           "Transformer"]
