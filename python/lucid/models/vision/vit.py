"""Vision Transformer under upstream lucid's names: ``ViTConfig``, the backbone ``ViT``
(``BaseModelOutput``; ``last_hidden_state`` the pooled token, ``(B, 1, dim)``) and
``ViTForImageClassification`` (``ImageClassificationOutput``), built by ``vit_base_16``,
``vit_base_32``, ``vit_large_16``, ``vit_large_32``, ``vit_huge_14`` and their ``*_cls``
forms. A small ViT is any of them with overrides, e.g.
``vit_base_16(image_size=32, patch_size=8, dim=64, depth=2, num_heads=4)``.

The module tree is upstream's (timm's names: ``patch_embed.proj``, ``cls_token``,
``pos_embed``, ``blocks.N.norm1`` / ``attn.qkv`` / ``attn.proj`` / ``norm2`` / ``mlp.fc1`` /
``mlp.fc2``, ``norm``, ``head``), so its state_dicts load. Quantizable in eager mode:
the patch projection, ``qkv``, ``proj``, the MLP linears and the head run in integers
after ``convert``, each between its own stubs; the residual stream, LayerNorms, the
attention's matmuls and GELU stay float.

>>> import lucid
>>> from lucid.models import vit_base_16
>>> vit = vit_base_16(image_size=32, patch_size=8, dim=32, depth=1, num_heads=2).eval()
>>> vit(lucid.randn(2, 3, 32, 32)).last_hidden_state.shape
(2, 1, 32)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import lucid._namespace as lucid

from ...nn import functional as F
from ...nn import init
from ...nn.containers import ModuleList, Sequential
from ...nn.layers import Conv2d, Dropout, Identity, LayerNorm, Linear, Tanh
from ...nn.module import Module
from ...nn.parameter import Parameter
from ...quantization.stubs import DeQuantStub, QuantStub
from .._quantizable import keep_float
from ..output import BaseModelOutput, ImageClassificationOutput
from ..pretrained import FeatureInfo, ModelConfig, PretrainedModel, build_from_config

__all__ = ["ViTConfig", "ViT", "ViTForImageClassification", "vit_base_16", "vit_base_16_cls", "vit_base_32",
           "vit_base_32_cls", "vit_large_16", "vit_large_16_cls", "vit_large_32", "vit_large_32_cls", "vit_huge_14",
           "vit_huge_14_cls"]


@dataclass(frozen=True)
class ViTConfig(ModelConfig):
    """``dim`` the token width, ``depth`` the blocks, ``mlp_ratio`` the MLP's width over
    ``dim``; ``representation_size`` adds the pre-training head's tanh layer;
    ``classifier`` pools the class token (``"token"``) or the mean patch token
    (``"gap"``)."""

    model_type: ClassVar[str] = "vit"
    image_size: int = 224
    patch_size: int = 16
    num_classes: int = 1000
    in_channels: int = 3
    dim: int = 768
    depth: int = 12
    num_heads: int = 12
    mlp_ratio: float = 4.0
    dropout: float = 0.0
    attention_dropout: float = 0.0
    layer_norm_eps: float = 1e-6
    representation_size: int | None = None
    classifier: str = "token"

    def __post_init__(self):
        if self.classifier not in ("token", "gap"):
            raise ValueError(f"classifier must be 'token' or 'gap', got {self.classifier!r}")
        if self.representation_size is not None and self.representation_size <= 0:
            raise ValueError(f"representation_size must be positive or None, got {self.representation_size}")
        if self.image_size % self.patch_size:
            raise ValueError(f"image_size {self.image_size} is not a multiple of patch_size {self.patch_size}")
        if self.dim % self.num_heads:
            raise ValueError(f"dim {self.dim} is not a multiple of num_heads {self.num_heads}")


class PatchEmbed(Module):
    """``proj``: a conv with kernel = stride = patch size; ``(B, C, H, W) -> (B, N, dim)``."""

    def __init__(self, in_channels, patch_size, dim):
        super().__init__()
        self.quant = QuantStub()
        self.proj = Conv2d(in_channels, dim, patch_size, stride=patch_size)
        self.dequant = DeQuantStub()

    def forward(self, x):
        x = self.dequant(self.proj(self.quant(x)))
        b, c, h, w = x.shape
        return x.reshape(b, c, h * w).permute(0, 2, 1)


class Attention(Module):
    """Multi-head self-attention with one fused ``qkv`` projection and ``proj``."""

    def __init__(self, dim, num_heads, attn_drop, proj_drop=0.0):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, dim // num_heads
        self.quant_in = QuantStub()
        self.qkv = Linear(dim, 3 * dim)
        self.dequant_qkv = DeQuantStub()
        self.quant_out = QuantStub()
        self.proj = Linear(dim, dim)
        self.dequant_out = DeQuantStub()
        self.attn_drop = Dropout(attn_drop)
        self.proj_drop = Dropout(proj_drop)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.dequant_qkv(self.qkv(self.quant_in(x)))
        qkv = qkv.reshape(b, n, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if self.training and self.attn_drop.p > 0:  # the fused kernel has no dropout on the weights
            weights = F.softmax(q @ k.permute(0, 1, 3, 2) / math.sqrt(self.head_dim), dim=-1)
            out = self.attn_drop(weights) @ v
        else:
            out = F.scaled_dot_product_attention(q, k, v)
        out = out.permute(0, 2, 1, 3).reshape(b, n, c)
        return self.proj_drop(self.dequant_out(self.proj(self.quant_out(out))))


class MLP(Module):
    """``fc1``, GELU, dropout, ``fc2``, dropout."""

    def __init__(self, dim, mlp_dim, dropout):
        super().__init__()
        self.quant_in = QuantStub()
        self.fc1 = Linear(dim, mlp_dim)
        self.dequant_hidden = DeQuantStub()
        self.quant_hidden = QuantStub()
        self.fc2 = Linear(mlp_dim, dim)
        self.dequant_out = DeQuantStub()
        self.drop = Dropout(dropout)

    def forward(self, x):
        x = self.drop(F.gelu(self.dequant_hidden(self.fc1(self.quant_in(x)))))
        return self.drop(self.dequant_out(self.fc2(self.quant_hidden(x))))


class ViTBlock(Module):
    """Pre-norm block: ``x + attn(norm1(x))``, then ``+ mlp(norm2(.))``."""

    def __init__(self, dim, num_heads, mlp_dim, dropout, attention_dropout, eps):
        super().__init__()
        self.norm1 = LayerNorm(dim, eps=eps)
        self.attn = Attention(dim, num_heads, attention_dropout, dropout)
        self.norm2 = LayerNorm(dim, eps=eps)
        self.mlp = MLP(dim, mlp_dim, dropout)
        keep_float(self.norm1, self.norm2)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class _ViTBody(PretrainedModel):
    """The trunk both upstream classes share: patch embedding, class token, position
    table, blocks, final norm; ``_tokens(x)`` returns the pooled ``(B, dim)`` token."""

    config_class: ClassVar[type] = ViTConfig
    base_model_prefix: ClassVar[str] = "vit"

    def __init__(self, config):
        super().__init__(config)
        num_patches = (config.image_size // config.patch_size) ** 2
        self.patch_embed = PatchEmbed(config.in_channels, config.patch_size, config.dim)
        self.cls_token = Parameter(lucid.zeros(1, 1, config.dim))
        self.pos_embed = Parameter(lucid.zeros(1, num_patches + 1, config.dim))
        self.pos_drop = Dropout(config.dropout)
        mlp_dim = int(config.dim * config.mlp_ratio)
        self.blocks = ModuleList([ViTBlock(config.dim, config.num_heads, mlp_dim, config.dropout,
                                           config.attention_dropout, config.layer_norm_eps)
                                  for _ in range(config.depth)])
        self.norm = LayerNorm(config.dim, eps=config.layer_norm_eps)
        keep_float(self.norm)
        self._feature_info = [FeatureInfo(stage=1, num_channels=config.dim, reduction=config.patch_size)]
        # trunc_normal(0.02) weights with zero biases, the class token and the position
        # table included (bare Parameters no module sweep reaches).
        for m in self.modules():
            if isinstance(m, (Linear, Conv2d)):
                init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    init.zeros_(m.bias)
        init.trunc_normal_(self.cls_token, std=0.02)
        init.trunc_normal_(self.pos_embed, std=0.02)

    @property
    def feature_info(self):
        return list(self._feature_info)

    def _tokens(self, x):
        x = self.patch_embed(x)
        x = lucid.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = self.pos_drop(x + self.pos_embed)
        for block in self.blocks:
            x = block(x)
        x = self.norm(x)
        return x[:, 1:].mean(dim=1) if self.config.classifier == "gap" else x[:, 0]

    def fuse_model(self, is_qat=None):
        """Nothing to fuse (no conv-bn or linear-relu runs); present so every model of the
        zoo has the same quantization steps."""


class ViT(_ViTBody):
    """Upstream's backbone: ``forward(x)`` returns ``BaseModelOutput`` with the pooled token
    as ``last_hidden_state`` ``(B, 1, dim)``; ``forward_features(x)`` gives ``(B, dim)``."""

    def forward_features(self, x):
        return self._tokens(x)

    def forward(self, x):
        return BaseModelOutput(last_hidden_state=self._tokens(x).unsqueeze(1))


class ViTForImageClassification(_ViTBody):
    """Upstream's classifier: the trunk, ``pre_logits`` (tanh layer with
    ``representation_size``, else Identity) and the zero-initialized ``head``."""

    def __init__(self, config):
        super().__init__(config)
        head_in = config.dim
        if config.representation_size is not None:
            self.pre_logits = Sequential(Linear(config.dim, config.representation_size), Tanh())
            head_in = config.representation_size
        else:
            self.pre_logits = Identity()
        self.quant_head = QuantStub()
        self.head = Linear(head_in, config.num_classes)
        self.dequant_head = DeQuantStub()
        init.zeros_(self.head.weight)
        init.zeros_(self.head.bias)

    def forward(self, x, labels=None):
        x = self.pre_logits(self.quant_head(self._tokens(x)))
        logits = self.dequant_head(self.head(x))
        loss = None if labels is None else F.cross_entropy(logits, labels)
        return ImageClassificationOutput(logits=logits, loss=loss)

    def reset_classifier(self, num_classes):
        self.head = Linear(self.head.in_features, num_classes)


_CFG_B16 = ViTConfig(patch_size=16, dim=768, depth=12, num_heads=12)
_CFG_B32 = ViTConfig(patch_size=32, dim=768, depth=12, num_heads=12)
_CFG_L16 = ViTConfig(patch_size=16, dim=1024, depth=24, num_heads=16)
_CFG_L32 = ViTConfig(patch_size=32, dim=1024, depth=24, num_heads=16)
_CFG_H14 = ViTConfig(patch_size=14, dim=1280, depth=32, num_heads=16)


def vit_base_16(pretrained=False, **overrides):
    """ViT-B/16 backbone: 12 blocks of width 768, 12 heads, 16x16 patches of 224x224
    images. ``overrides`` replace ``ViTConfig`` fields; ``pretrained`` must be False."""
    return build_from_config(ViT, _CFG_B16, "vit_base_16", pretrained, None, overrides)


def vit_base_16_cls(pretrained=False, *, weights=None, **overrides):
    """ViT-B/16 classifier."""
    return build_from_config(ViTForImageClassification, _CFG_B16, "vit_base_16_cls", pretrained, weights, overrides)


def vit_base_32(pretrained=False, **overrides):
    """ViT-B/32 backbone (32x32 patches)."""
    return build_from_config(ViT, _CFG_B32, "vit_base_32", pretrained, None, overrides)


def vit_base_32_cls(pretrained=False, *, weights=None, **overrides):
    """ViT-B/32 classifier."""
    return build_from_config(ViTForImageClassification, _CFG_B32, "vit_base_32_cls", pretrained, weights, overrides)


def vit_large_16(pretrained=False, **overrides):
    """ViT-L/16 backbone: 24 blocks of width 1024, 16 heads."""
    return build_from_config(ViT, _CFG_L16, "vit_large_16", pretrained, None, overrides)


def vit_large_16_cls(pretrained=False, *, weights=None, **overrides):
    """ViT-L/16 classifier."""
    return build_from_config(ViTForImageClassification, _CFG_L16, "vit_large_16_cls", pretrained, weights,
                             overrides)


def vit_large_32(pretrained=False, **overrides):
    """ViT-L/32 backbone."""
    return build_from_config(ViT, _CFG_L32, "vit_large_32", pretrained, None, overrides)


def vit_large_32_cls(pretrained=False, *, weights=None, **overrides):
    """ViT-L/32 classifier."""
    return build_from_config(ViTForImageClassification, _CFG_L32, "vit_large_32_cls", pretrained, weights,
                             overrides)


def vit_huge_14(pretrained=False, **overrides):
    """ViT-H/14 backbone: 32 blocks of width 1280, 16 heads, 14x14 patches."""
    return build_from_config(ViT, _CFG_H14, "vit_huge_14", pretrained, None, overrides)


def vit_huge_14_cls(pretrained=False, *, weights=None, **overrides):
    """ViT-H/14 classifier."""
    return build_from_config(ViTForImageClassification, _CFG_H14, "vit_huge_14_cls", pretrained, weights,
                             overrides)
