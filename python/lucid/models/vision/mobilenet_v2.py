"""MobileNetV2 under upstream lucid's names: ``MobileNetV2Config``, the backbone
``MobileNetV2`` (``BaseModelOutput``; ``last_hidden_state`` the pooled ``(B, 1280, 1, 1)``
features) and ``MobileNetV2ForImageClassification`` (``ImageClassificationOutput``),
built by ``mobilenet_v2`` / ``mobilenet_v2_075`` and their ``*_cls`` forms.

``lucid.models.mobilenet_v2`` is torchvision's (a plain tensor out): the two cannot share
the name, and the PyTorch form wins there; upstream's factory is this module's
``mobilenet_v2`` (``from lucid.models.vision.mobilenet_v2 import mobilenet_v2``).

The module tree is upstream's (a flat ``features`` Sequential: ``features.0`` conv,
``features.1`` bn, the blocks' ``features.N.conv.K``, ``classifier`` a Linear after
``drop``), so its state_dicts load. Quantizable in eager mode as
``lucid.models.mobilenetv2``.

>>> import lucid
>>> from lucid.models.vision.mobilenet_v2 import mobilenet_v2
>>> mobilenet_v2().eval()(lucid.randn(1, 3, 32, 32)).last_hidden_state.shape
(1, 1280, 1, 1)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...nn import functional as F
from ...nn.containers import Sequential
from ...nn.layers import AdaptiveAvgPool2d, BatchNorm2d, Conv2d, Dropout, ReLU6
from ...nn.module import Module
from ...nn.quantized.float_functional import FloatFunctional
from ...quantization.stubs import DeQuantStub, QuantStub
from .. import mobilenetv2 as tv
from .._quantizable import conv_bn_groups, fuse
from ..output import BaseModelOutput, ImageClassificationOutput
from ..pretrained import FeatureInfo, ModelConfig, PretrainedModel, build_classifier, build_from_config

__all__ = ["MobileNetV2Config", "MobileNetV2", "MobileNetV2ForImageClassification", "mobilenet_v2",
           "mobilenet_v2_cls", "mobilenet_v2_075", "mobilenet_v2_075_cls"]


@dataclass(frozen=True)
class MobileNetV2Config(ModelConfig):
    """``width_mult`` scales every width (rounded to multiples of 8; the 1280-channel head
    never shrinks); ``dropout`` before the classifier."""

    model_type: ClassVar[str] = "mobilenet_v2"
    num_classes: int = 1000
    in_channels: int = 3
    width_mult: float = 1.0
    dropout: float = 0.2


class InvertedResidual(Module):
    """Upstream's block, one flat ``conv`` Sequential: [1x1 expand, bn, ReLU6,] 3x3
    depthwise, bn, ReLU6, 1x1 project, bn; the identity added through ``skip_add`` when
    the stride is 1 and the width unchanged."""

    def __init__(self, in_ch, out_ch, stride, expand_ratio):
        super().__init__()
        self.use_residual = stride == 1 and in_ch == out_ch
        hidden = in_ch * expand_ratio
        layers = []
        if expand_ratio != 1:
            layers += [Conv2d(in_ch, hidden, 1, bias=False), BatchNorm2d(hidden), ReLU6(inplace=True)]
        layers += [Conv2d(hidden, hidden, 3, stride=stride, padding=1, groups=hidden, bias=False),
                   BatchNorm2d(hidden), ReLU6(inplace=True),
                   Conv2d(hidden, out_ch, 1, bias=False), BatchNorm2d(out_ch)]
        self.conv = Sequential(*layers)
        if self.use_residual:
            self.skip_add = FloatFunctional()

    def forward(self, x):
        out = self.conv(x)
        return self.skip_add.add(out, x) if self.use_residual else out

    def fuse_model(self, is_qat=None):
        fuse(self.conv, conv_bn_groups(self.conv), is_qat)


def _features(config):
    def ch(c):
        return tv.make_divisible(c * config.width_mult)

    stem = ch(32)
    layers = [Conv2d(config.in_channels, stem, 3, stride=2, padding=1, bias=False), BatchNorm2d(stem),
              ReLU6(inplace=True)]
    in_ch, reduction, info = stem, 2, []
    for stage, (t, c, n, s) in enumerate(tv.INVERTED_RESIDUAL_SETTING):
        out_ch = ch(c)
        for i in range(n):
            layers.append(InvertedResidual(in_ch, out_ch, s if i == 0 else 1, t))
            in_ch = out_ch
        reduction *= s
        info.append(FeatureInfo(stage=stage + 1, num_channels=out_ch, reduction=reduction))
    last = tv.make_divisible(1280 * max(1.0, config.width_mult))
    layers += [Conv2d(in_ch, last, 1, bias=False), BatchNorm2d(last), ReLU6(inplace=True)]
    return Sequential(*layers), last, info


class _MobileNetV2Body(PretrainedModel):
    config_class: ClassVar[type] = MobileNetV2Config
    base_model_prefix: ClassVar[str] = "mobilenet_v2"

    def __init__(self, config):
        super().__init__(config)
        self.quant = QuantStub()
        self.features, self.num_features, self._feature_info = _features(config)
        self.avgpool = AdaptiveAvgPool2d((1, 1))
        self.dequant = DeQuantStub()

    @property
    def feature_info(self):
        return list(self._feature_info)

    def fuse_model(self, is_qat=None):
        """Fuses every conv with its BatchNorm in place (folded for post-training
        quantization, kept for QAT with ``is_qat=True``; ``None`` follows ``self.training``)."""
        if is_qat is None:
            is_qat = self.training
        fuse(self.features, conv_bn_groups(self.features), is_qat)
        for m in self.features:
            if isinstance(m, InvertedResidual):
                m.fuse_model(is_qat)


class MobileNetV2(_MobileNetV2Body):
    """Upstream's backbone: ``forward(x)`` returns ``BaseModelOutput`` whose
    ``last_hidden_state`` is the globally pooled ``(B, C, 1, 1)`` feature map."""

    def __init__(self, config):
        super().__init__(config)
        tv.init_mobilenet(self)

    def forward_features(self, x):
        return self.dequant(self.avgpool(self.features(self.quant(x))))

    def forward(self, x):
        return BaseModelOutput(last_hidden_state=self.forward_features(x))


class MobileNetV2ForImageClassification(_MobileNetV2Body):
    """Upstream's classifier: features, pooling, ``drop`` and ``classifier``;
    ``forward(x, labels=None)`` returns ``ImageClassificationOutput``."""

    def __init__(self, config):
        super().__init__(config)
        self.drop = Dropout(p=config.dropout)
        self.classifier = build_classifier(self.num_features, config.num_classes, 0.0)
        tv.init_mobilenet(self)

    def forward(self, x, labels=None):
        x = self.drop(self.avgpool(self.features(self.quant(x))).flatten(1))
        logits = self.dequant(self.classifier(x))
        loss = None if labels is None else F.cross_entropy(logits, labels)
        return ImageClassificationOutput(logits=logits, loss=loss)

    def reset_classifier(self, num_classes):
        self.classifier = build_classifier(self.num_features, num_classes, 0.0)


# torchvision's MobileNetV2 class, given this config, builds this backbone
tv.CONFIG_MODELS[MobileNetV2Config] = MobileNetV2

_CFG_100 = MobileNetV2Config(width_mult=1.0)
_CFG_075 = MobileNetV2Config(width_mult=0.75)


def mobilenet_v2(pretrained=False, **overrides):
    """MobileNetV2 backbone (``BaseModelOutput``). ``overrides`` replace
    ``MobileNetV2Config`` fields; ``pretrained`` must be False (no weights ship)."""
    return build_from_config(MobileNetV2, _CFG_100, "mobilenet_v2", pretrained, None, overrides)


def mobilenet_v2_cls(pretrained=False, *, weights=None, **overrides):
    """MobileNetV2 classifier (``ImageClassificationOutput``)."""
    return build_from_config(MobileNetV2ForImageClassification, _CFG_100, "mobilenet_v2_cls", pretrained,
                             weights, overrides)


def mobilenet_v2_075(pretrained=False, **overrides):
    """MobileNetV2 backbone at width 0.75."""
    return build_from_config(MobileNetV2, _CFG_075, "mobilenet_v2_075", pretrained, None, overrides)


def mobilenet_v2_075_cls(pretrained=False, **overrides):
    """MobileNetV2 classifier at width 0.75."""
    return build_from_config(MobileNetV2ForImageClassification, _CFG_075, "mobilenet_v2_075_cls", pretrained,
                             None, overrides)
