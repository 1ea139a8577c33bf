"""Vision Transformer under torchvision's names: ``VisionTransformer`` (any size) and
``vit_b_16`` / ``vit_b_32`` / ``vit_l_16`` / ``vit_l_32`` / ``vit_h_14``. The forward returns
the logits tensor and the ``state_dict`` keys are torchvision's (``class_token``,
``conv_proj``, ``encoder.pos_embedding``, ``encoder.layers.encoder_layer_N.ln_1`` /
``self_attention.in_proj_weight`` / ``mlp.0`` / ``mlp.3``, ``encoder.ln``,
``heads.head``; docs/models.md).

Quantizable in eager mode: the patch projection, the MLP linears and the head run in
integers after ``convert`` (each between its own QuantStub and DeQuantStub); the
residual stream, the LayerNorms, GELU and the attention stay float (``qconfig = None``
on them), since ``nn.MultiheadAttention`` computes its projections from its own
parameters, not through Linear modules that could be swapped.

>>> import lucid
>>> from lucid.models import VisionTransformer
>>> vit = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32,
...                         num_classes=10).eval()
>>> vit(lucid.randn(1, 3, 32, 32)).shape
(1, 10)
"""
from __future__ import annotations

import math
from collections import OrderedDict
from functools import partial

import lucid._namespace as lucid

from ..nn import init
from ..nn.containers import Sequential
from ..nn.layers import GELU, Conv2d, Dropout, LayerNorm, Linear, MultiheadAttention, Tanh
from ..nn.module import Module
from ..nn.parameter import Parameter
from ..quantization.stubs import DeQuantStub, QuantStub
from ._quantizable import keep_float
from .pretrained import reject_weights

__all__ = ["VisionTransformer", "MLPBlock", "EncoderBlock", "Encoder", "vit_b_16", "vit_b_32", "vit_l_16",
           "vit_l_32", "vit_h_14"]


class MLPBlock(Module):
    """Linear (``0``), GELU (``1``), Dropout (``2``), Linear (``3``), Dropout (``4``): the
    children keep torchvision's names (keys ``mlp.0.weight``, ``mlp.3.bias``); each linear
    sits between its own stubs so GELU runs on floats."""

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__()
        self.quant_in = QuantStub()
        self.add_module("0", Linear(in_dim, mlp_dim))
        self.dequant_hidden = DeQuantStub()
        self.add_module("1", GELU())
        self.add_module("2", Dropout(dropout))
        self.quant_hidden = QuantStub()
        self.add_module("3", Linear(mlp_dim, in_dim))
        self.dequant_out = DeQuantStub()
        self.add_module("4", Dropout(dropout))
        keep_float(self._modules["1"])
        for i in ("0", "3"):
            init.xavier_uniform_(self._modules[i].weight)
            init.normal_(self._modules[i].bias, std=1e-6)

    def forward(self, x):
        m = self._modules
        x = self.dequant_hidden(m["0"](self.quant_in(x)))
        x = m["2"](m["1"](x))
        x = self.dequant_out(m["3"](self.quant_hidden(x)))
        return m["4"](x)


class EncoderBlock(Module):
    """Pre-norm transformer layer: ``x + attention(ln_1(x))``, then ``+ mlp(ln_2(.))``."""

    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(LayerNorm, eps=1e-6)
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = MultiheadAttention(hidden_dim, num_heads, dropout=attention_dropout, batch_first=True)
        self.dropout = Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)
        keep_float(self.ln_1, self.self_attention, self.ln_2)

    def forward(self, input):
        if input.ndim != 3:
            raise ValueError(f"EncoderBlock: expected (batch_size, seq_length, hidden_dim), got {tuple(input.shape)}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(Module):
    """Learned position embedding (``pos_embedding``), dropout, the ``layers``
    (``encoder_layer_0`` ...) and the final LayerNorm ``ln``."""

    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(LayerNorm, eps=1e-6)
        self.pos_embedding = Parameter(lucid.empty(1, seq_length, hidden_dim))
        init.normal_(self.pos_embedding, std=0.02)
        self.dropout = Dropout(dropout)
        self.layers = Sequential(OrderedDict(
            (f"encoder_layer_{i}", EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                                                norm_layer))
            for i in range(num_layers)))
        self.ln = norm_layer(hidden_dim)
        keep_float(self.ln)

    def forward(self, input):
        if input.ndim != 3:
            raise ValueError(f"Encoder: expected (batch_size, seq_length, hidden_dim), got {tuple(input.shape)}")
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(Module):
    """torchvision's ``VisionTransformer(image_size, patch_size, num_layers, num_heads,
    hidden_dim, mlp_dim, dropout=0.0, attention_dropout=0.0, num_classes=1000,
    representation_size=None, norm_layer=LayerNorm(eps=1e-6), conv_stem_configs=None)``:
    non-overlapping ``patch_size`` patches projected by ``conv_proj``, a class token, the
    encoder, and ``heads`` on the class token. Input ``(N, 3, image_size, image_size)``,
    output ``(N, num_classes)``. ``conv_stem_configs`` (a conv stem) is not supported."""

    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, dropout=0.0,
                 attention_dropout=0.0, num_classes=1000, representation_size=None, norm_layer=None,
                 conv_stem_configs=None):
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"VisionTransformer: input shape indivisible by patch size ({image_size} by "
                             f"{patch_size})")
        if conv_stem_configs is not None:
            raise NotImplementedError("VisionTransformer: conv_stem_configs is not supported")
        self.image_size, self.patch_size = image_size, patch_size
        self.hidden_dim, self.mlp_dim = hidden_dim, mlp_dim
        self.attention_dropout, self.dropout = attention_dropout, dropout
        self.num_classes, self.representation_size = num_classes, representation_size
        self.norm_layer = norm_layer or partial(LayerNorm, eps=1e-6)

        self.quant = QuantStub()
        self.conv_proj = Conv2d(3, hidden_dim, patch_size, stride=patch_size)
        self.dequant = DeQuantStub()
        seq_length = (image_size // patch_size) ** 2
        self.class_token = Parameter(lucid.zeros(1, 1, hidden_dim))
        seq_length += 1
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                               self.norm_layer)
        self.seq_length = seq_length

        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = Linear(hidden_dim, representation_size)
            heads["act"] = Tanh()
            heads["head"] = Linear(representation_size, num_classes)
        self.quant_heads = QuantStub()
        self.heads = Sequential(heads)
        self.dequant_heads = DeQuantStub()

        fan_in = 3 * patch_size * patch_size
        init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
        init.zeros_(self.conv_proj.bias)
        if representation_size is not None:
            init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / hidden_dim))
            init.zeros_(self.heads.pre_logits.bias)
        init.zeros_(self.heads.head.weight)
        init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, _, h, w = x.shape
        p = self.patch_size
        if h != self.image_size or w != self.image_size:
            raise ValueError(f"VisionTransformer: wrong image size! Expected {self.image_size} but got {h}x{w}")
        x = self.dequant(self.conv_proj(self.quant(x)))  # (n, hidden_dim, h / p, w / p)
        return x.reshape(n, self.hidden_dim, (h // p) * (w // p)).permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        n = x.shape[0]
        x = lucid.cat([self.class_token.expand(n, -1, -1), x], dim=1)
        x = self.encoder(x)[:, 0]
        return self.dequant_heads(self.heads(self.quant_heads(x)))

    def fuse_model(self, is_qat=None):
        """Nothing to fuse (no conv-bn or linear-relu runs); present so every model of the
        zoo has the same quantization steps."""


def _vit(name, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, weights, kwargs):
    reject_weights(name, weights)
    image_size = kwargs.pop("image_size", 224)
    return VisionTransformer(image_size=image_size, patch_size=patch_size, num_layers=num_layers,
                             num_heads=num_heads, hidden_dim=hidden_dim, mlp_dim=mlp_dim, **kwargs)


def vit_b_16(*, weights=None, progress=True, **kwargs):
    """ViT-B/16 (torchvision's ``vit_b_16``): 12 layers, 12 heads, width 768, MLP 3072, 16x16
    patches of 224x224 images (``image_size=`` and the other ``VisionTransformer`` keywords
    may be passed), 86.6M parameters; ``weights`` must be None."""
    return _vit("vit_b_16", 16, 12, 12, 768, 3072, weights, kwargs)


def vit_b_32(*, weights=None, progress=True, **kwargs):
    """ViT-B/32: as ``vit_b_16`` with 32x32 patches."""
    return _vit("vit_b_32", 32, 12, 12, 768, 3072, weights, kwargs)


def vit_l_16(*, weights=None, progress=True, **kwargs):
    """ViT-L/16: 24 layers, 16 heads, width 1024, MLP 4096, 16x16 patches."""
    return _vit("vit_l_16", 16, 24, 16, 1024, 4096, weights, kwargs)


def vit_l_32(*, weights=None, progress=True, **kwargs):
    """ViT-L/32: as ``vit_l_16`` with 32x32 patches."""
    return _vit("vit_l_32", 32, 24, 16, 1024, 4096, weights, kwargs)


def vit_h_14(*, weights=None, progress=True, **kwargs):
    """ViT-H/14: 32 layers, 16 heads, width 1280, MLP 5120, 14x14 patches."""
    return _vit("vit_h_14", 14, 32, 16, 1280, 5120, weights, kwargs)
