"""ResNet under upstream lucid's names: ``ResNetConfig``, the backbone ``ResNet`` (forward
returns ``BaseModelOutput``, ``last_hidden_state`` the last stage's ``(B, C, H/32, W/32)``
map) and ``ResNetForImageClassification`` (``ImageClassificationOutput``: ``logits``, and
``loss`` when given ``labels``), built by ``resnet_18`` / ``resnet_34`` / ``resnet_50`` and
their ``*_cls`` forms, whose keywords override the config's fields
(``resnet_18(num_classes=10)``).

The module tree is upstream's, so its state_dicts load: ``stem.0`` (7x7 conv), ``stem.1``
(bn), ``layer1.0.conv1`` ... (the blocks are torchvision's ``BasicBlock`` /
``Bottleneck``, whose names upstream shares), ``classifier`` (a Linear, or
``classifier.1`` after a dropout). Quantizable in eager mode as ``lucid.models.resnet``.

>>> import lucid
>>> from lucid.models import resnet_18
>>> resnet_18(num_classes=10).eval()(lucid.randn(1, 3, 64, 64)).last_hidden_state.shape
(1, 512, 2, 2)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...nn import functional as F
from ...nn.containers import Sequential
from ...nn.layers import AdaptiveAvgPool2d, BatchNorm2d, Conv2d, MaxPool2d, ReLU
from ...quantization.stubs import DeQuantStub, QuantStub
from .. import resnet as tv
from .._quantizable import fuse
from ..output import BaseModelOutput, ImageClassificationOutput
from ..pretrained import FeatureInfo, ModelConfig, PretrainedModel, build_classifier, build_from_config

__all__ = ["ResNetConfig", "ResNet", "ResNetForImageClassification", "resnet_18", "resnet_18_cls", "resnet_34",
           "resnet_34_cls", "resnet_50", "resnet_50_cls"]


@dataclass(frozen=True)
class ResNetConfig(ModelConfig):
    """Every field of a ResNet: ``block_type`` ``"basic"`` (ResNet-18/34) or
    ``"bottleneck"``; ``layers`` the blocks per stage; ``hidden_sizes`` the stages'
    planes (output ``hidden_sizes[i] * expansion``); ``bottleneck_width_mult`` widens the
    bottlenecks' inner convs (2 for Wide ResNets); ``dropout`` before the classifier;
    ``num_classes`` and ``dropout`` matter only to the classifier."""

    model_type: ClassVar[str] = "resnet"
    num_classes: int = 1000
    in_channels: int = 3
    block_type: str = "bottleneck"
    layers: tuple = (3, 4, 6, 3)
    stem_channels: int = 64
    hidden_sizes: tuple = (64, 128, 256, 512)
    bottleneck_width_mult: int = 1
    dropout: float = 0.0
    zero_init_residual: bool = False

    def __post_init__(self):
        # JSON gives lists back; the frozen dataclass needs tuples to stay hashable.
        object.__setattr__(self, "layers", tuple(self.layers))
        object.__setattr__(self, "hidden_sizes", tuple(self.hidden_sizes))
        if self.block_type not in ("basic", "bottleneck"):
            raise ValueError(f"block_type must be 'basic' or 'bottleneck', got {self.block_type!r}")
        if len(self.layers) != len(self.hidden_sizes):
            raise ValueError(f"layers {self.layers} and hidden_sizes {self.hidden_sizes} must have one entry per "
                             "stage each")


def _block(config):
    return tv.BasicBlock if config.block_type == "basic" else tv.Bottleneck


class _ResNetBody(PretrainedModel):
    """The stem, max pool and stages both upstream classes share; ``quant`` / ``dequant``
    bracket the network for eager-mode quantization."""

    config_class: ClassVar[type] = ResNetConfig
    base_model_prefix: ClassVar[str] = "resnet"

    def __init__(self, config):
        super().__init__(config)
        block = _block(config)
        width = 64 * config.bottleneck_width_mult if block is tv.Bottleneck else 64
        sc = config.stem_channels
        self.quant = QuantStub()
        self.stem = Sequential(Conv2d(config.in_channels, sc, 7, stride=2, padding=3, bias=False), BatchNorm2d(sc),
                               ReLU(inplace=True))
        self.maxpool = MaxPool2d(3, stride=2, padding=1)
        channels, reduction, self._feature_info = sc, 4, []
        for i, (planes, blocks) in enumerate(zip(config.hidden_sizes, config.layers)):
            stride = 1 if i == 0 else 2
            reduction *= stride
            stage, channels = tv.make_stage(block, channels, planes, blocks, stride, base_width=width)
            setattr(self, f"layer{i + 1}", stage)
            self._feature_info.append(FeatureInfo(stage=i + 1, num_channels=channels, reduction=reduction))
        self.num_features = channels
        self.dequant = DeQuantStub()

    @property
    def feature_info(self):
        return list(self._feature_info)

    def _stages(self, x):
        x = self.maxpool(self.stem(x))
        for i in range(len(self.config.layers)):
            x = getattr(self, f"layer{i + 1}")(x)
        return x

    def fuse_model(self, is_qat=None):
        """Fuses the stem and every block's conv-bn(-relu) runs in place (BatchNorm folded
        for post-training quantization, kept for QAT with ``is_qat=True``; ``None``
        follows ``self.training``)."""
        if is_qat is None:
            is_qat = self.training
        fuse(self.stem, [["0", "1", "2"]], is_qat)
        for m in self.modules():
            if isinstance(m, (tv.BasicBlock, tv.Bottleneck)):
                m.fuse_model(is_qat)


class ResNet(_ResNetBody):
    """Upstream's feature-extracting backbone (no head): ``forward(x)`` returns
    ``BaseModelOutput(last_hidden_state=...)``; ``forward_features(x)`` the tensor."""

    def __init__(self, config):
        super().__init__(config)
        tv.init_resnet(self, config.zero_init_residual)

    def forward_features(self, x):
        return self.dequant(self._stages(self.quant(x)))

    def forward(self, x):
        return BaseModelOutput(last_hidden_state=self.forward_features(x))


class ResNetForImageClassification(_ResNetBody):
    """Upstream's classifier: the backbone, global average pooling and ``classifier``.
    ``forward(x, labels=None)`` returns ``ImageClassificationOutput`` (``loss`` the
    cross-entropy when ``labels`` are given)."""

    def __init__(self, config):
        super().__init__(config)
        self.avgpool = AdaptiveAvgPool2d((1, 1))
        self.classifier = build_classifier(self.num_features, config.num_classes, config.dropout)
        tv.init_resnet(self, config.zero_init_residual)

    def forward(self, x, labels=None):
        x = self.avgpool(self._stages(self.quant(x))).flatten(1)
        logits = self.dequant(self.classifier(x))
        loss = None if labels is None else F.cross_entropy(logits, labels)
        return ImageClassificationOutput(logits=logits, loss=loss)

    def reset_classifier(self, num_classes):
        """A new (untrained) head with ``num_classes`` outputs."""
        self.classifier = build_classifier(self.num_features, num_classes, self.config.dropout)


# torchvision's ResNet class, given this config, builds this backbone
tv.CONFIG_MODELS[ResNetConfig] = ResNet

_CFG_18 = ResNetConfig(block_type="basic", layers=(2, 2, 2, 2))
_CFG_34 = ResNetConfig(block_type="basic", layers=(3, 4, 6, 3))
_CFG_50 = ResNetConfig(block_type="bottleneck", layers=(3, 4, 6, 3))


def resnet_18(pretrained=False, **overrides):
    """ResNet-18 backbone (``BaseModelOutput``; 512 output channels). ``overrides`` replace
    ``ResNetConfig`` fields; ``pretrained`` must be False (no weights ship)."""
    return build_from_config(ResNet, _CFG_18, "resnet_18", pretrained, None, overrides)


def resnet_18_cls(pretrained=False, *, weights=None, **overrides):
    """ResNet-18 classifier (``ImageClassificationOutput``)."""
    return build_from_config(ResNetForImageClassification, _CFG_18, "resnet_18_cls", pretrained, weights, overrides)


def resnet_34(pretrained=False, **overrides):
    """ResNet-34 backbone (512 output channels)."""
    return build_from_config(ResNet, _CFG_34, "resnet_34", pretrained, None, overrides)


def resnet_34_cls(pretrained=False, *, weights=None, **overrides):
    """ResNet-34 classifier."""
    return build_from_config(ResNetForImageClassification, _CFG_34, "resnet_34_cls", pretrained, weights, overrides)


def resnet_50(pretrained=False, **overrides):
    """ResNet-50 backbone (2048 output channels)."""
    return build_from_config(ResNet, _CFG_50, "resnet_50", pretrained, None, overrides)


def resnet_50_cls(pretrained=False, *, weights=None, **overrides):
    """ResNet-50 classifier."""
    return build_from_config(ResNetForImageClassification, _CFG_50, "resnet_50_cls", pretrained, weights, overrides)
