"""MobileNetV2 under torchvision's names: ``mobilenet_v2`` and the ``MobileNetV2`` class with
its ``InvertedResidual`` block. The forward returns the logits tensor and the
``state_dict`` keys are torchvision's (``features.0.0`` conv, ``features.0.1`` bn,
``features.N.conv.*`` inside the blocks, ``features.18``, ``classifier.1``;
docs/models.md).

Quantizable in eager mode without changing the float model: ``quant`` / ``dequant``
stubs, the residual additions through ``FloatFunctional`` (``skip_add``), and
``fuse_model(is_qat=None)``, which fuses each conv with its BatchNorm. ReLU6 stays a
module of its own (``nn.quantized.ReLU6`` after ``convert``): torchvision's quantizable
version replaces ReLU6 by ReLU to fuse it, which changes the float model's function.

>>> import lucid
>>> from lucid.models import mobilenet_v2
>>> mobilenet_v2(num_classes=10).eval()(lucid.randn(1, 3, 32, 32)).shape
(1, 10)
"""
from __future__ import annotations

from ..nn import init
from ..nn.containers import Sequential
from ..nn.layers import AdaptiveAvgPool2d, BatchNorm2d, Conv2d, Dropout, GroupNorm, Linear, ReLU, ReLU6
from ..nn.module import Module
from ..nn.quantized.float_functional import FloatFunctional
from ..quantization.stubs import DeQuantStub, QuantStub
from ._quantizable import conv_bn_groups, fuse
from .pretrained import reject_weights

__all__ = ["MobileNetV2", "InvertedResidual", "Conv2dNormActivation", "mobilenet_v2", "make_divisible"]

# Upstream's config classes -> the model class that takes them (see resnet.CONFIG_MODELS).
CONFIG_MODELS: dict = {}

# (expand ratio t, output channels c, repeats n, first stride s), the paper's Table 2.
INVERTED_RESIDUAL_SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
                             [6, 160, 3, 2], [6, 320, 1, 1]]


def make_divisible(v, divisor=8, min_value=None):
    """``v`` rounded to a multiple of ``divisor`` (at least ``min_value``, default
    ``divisor``), never more than 10% below ``v``: the channel rounding of the reference
    implementation, so widths (and checkpoints) match it."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class Conv2dNormActivation(Sequential):
    """``Sequential(conv, norm, activation)`` as torchvision's ``ops.Conv2dNormActivation``
    (keys ``0.weight``, ``1.running_mean``, ...): padding keeps the size at stride 1; the
    conv has a bias only without a norm layer; ``norm_layer`` / ``activation_layer`` None
    leave that part out."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=BatchNorm2d, activation_layer=ReLU, dilation=1, inplace=True, bias=None):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation, groups=groups,
                         bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(inplace=inplace))
        super().__init__(*layers)
        self.out_channels = out_channels

    def fuse_model(self, is_qat=None):
        """Fuses the conv with its BatchNorm (and a ReLU; a ReLU6 stays separate)."""
        fuse(self, conv_bn_groups(self), is_qat)


class InvertedResidual(Module):
    """Expand (1x1, unless ``expand_ratio`` is 1), depthwise 3x3 (``stride``), project (1x1,
    linear), with the identity added through ``skip_add`` when ``stride == 1`` and the
    channel count is unchanged."""

    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=None):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        norm_layer = norm_layer or BatchNorm2d
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=ReLU6))
        layers += [
            Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim, norm_layer=norm_layer,
                                 activation_layer=ReLU6),
            Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            norm_layer(oup),
        ]
        self.conv = Sequential(*layers)
        self.out_channels = oup
        self._is_cn = stride > 1
        if self.use_res_connect:  # an unused FloatFunctional would get an observer that never sees data
            self.skip_add = FloatFunctional()

    def forward(self, x):
        if self.use_res_connect:
            return self.skip_add.add(x, self.conv(x))
        return self.conv(x)

    def fuse_model(self, is_qat=None):
        fuse(self.conv, conv_bn_groups(self.conv), is_qat)  # the projection conv and its BatchNorm
        for m in self.conv:
            if isinstance(m, Conv2dNormActivation):
                m.fuse_model(is_qat)


def init_mobilenet(model) -> None:
    """The reference initialization: He normal (fan_out) convs with zero bias, unit norms,
    N(0, 0.01) linear weights with zero bias."""
    for m in model.modules():
        if isinstance(m, Conv2d):
            init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                init.zeros_(m.bias)
        elif isinstance(m, (BatchNorm2d, GroupNorm)) and m.weight is not None:
            init.ones_(m.weight)
            init.zeros_(m.bias)
        elif isinstance(m, Linear):
            init.normal_(m.weight, 0, 0.01)
            if m.bias is not None:
                init.zeros_(m.bias)


class MobileNetV2(Module):
    """torchvision's ``MobileNetV2(num_classes=1000, width_mult=1.0,
    inverted_residual_setting=None, round_nearest=8, block=None, norm_layer=None,
    dropout=0.2)``: a 3x3 stride-2 stem (32 channels), the inverted-residual stages,
    a 1x1 conv to 1280 channels, global average pooling and ``classifier`` (dropout,
    linear). Input ``(N, 3, H, W)``, output ``(N, num_classes)``.

    Given upstream lucid's ``MobileNetV2Config`` instead, it builds upstream's backbone,
    ``lucid.models.vision.mobilenet_v2.MobileNetV2``."""

    def __new__(cls, *args, **kwargs):
        config = args[0] if args else kwargs.get("config")
        target = CONFIG_MODELS.get(type(config))
        if target is not None:
            return target(config)
        return super().__new__(cls)

    def __init__(self, num_classes=1000, width_mult=1.0, inverted_residual_setting=None, round_nearest=8,
                 block=None, norm_layer=None, dropout=0.2):
        super().__init__()
        block = block or InvertedResidual
        norm_layer = norm_layer or BatchNorm2d
        setting = INVERTED_RESIDUAL_SETTING if inverted_residual_setting is None else inverted_residual_setting
        if len(setting) == 0 or any(len(row) != 4 for row in setting):
            raise ValueError(f"inverted_residual_setting should be non-empty or a 4-element list, got {setting}")
        input_channel = make_divisible(32 * width_mult, round_nearest)
        self.last_channel = make_divisible(1280 * max(1.0, width_mult), round_nearest)
        features = [Conv2dNormActivation(3, input_channel, stride=2, norm_layer=norm_layer, activation_layer=ReLU6)]
        for t, c, n, s in setting:
            output_channel = make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(block(input_channel, output_channel, s if i == 0 else 1, expand_ratio=t,
                                      norm_layer=norm_layer))
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1, norm_layer=norm_layer,
                                             activation_layer=ReLU6))
        self.quant = QuantStub()
        self.features = Sequential(*features)
        self.avgpool = AdaptiveAvgPool2d((1, 1))
        self.classifier = Sequential(Dropout(p=dropout), Linear(self.last_channel, num_classes))
        self.dequant = DeQuantStub()
        init_mobilenet(self)

    def _forward_impl(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))

    def forward(self, x):
        return self.dequant(self._forward_impl(self.quant(x)))

    def fuse_model(self, is_qat=None):
        """Fuses every conv with its BatchNorm in place (folded for post-training
        quantization, kept for QAT with ``is_qat=True``; ``None`` follows
        ``self.training``)."""
        if is_qat is None:
            is_qat = self.training
        for m in self.features:
            if hasattr(m, "fuse_model"):
                m.fuse_model(is_qat)


def mobilenet_v2(*, weights=None, progress=True, **kwargs):
    """MobileNetV2 (torchvision's ``mobilenet_v2``), 3.5M parameters at ``num_classes=1000``;
    ``kwargs`` go to ``MobileNetV2`` (``num_classes``, ``width_mult``, ``dropout``, ...);
    ``weights`` must be None: no weights ship (docs/models.md). Upstream lucid's
    ``mobilenet_v2`` (a backbone returning ``BaseModelOutput``) is
    ``lucid.models.vision.mobilenet_v2.mobilenet_v2``."""
    reject_weights("mobilenet_v2", weights)
    return MobileNetV2(**kwargs)
